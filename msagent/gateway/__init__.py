"""The game-client gateway (``msagent serve``): game clients upload episodes over HTTP, each
checked against its game's schema and put once on a Redis stream for the ingestion consumer;
published ONNX models are served back to them. Per-client tokens (``msagent tokens``) with
scopes, rate limits and size limits guard it.

Modules: ``app`` (the upload and info routes), ``fast_upload`` (uploads answered ahead of
FastAPI's routing), ``model_routes`` (model downloads), ``body``
(bounded reading and decoding), ``producer`` and ``batcher`` (exactly-once stream adds, sent
pipelined), ``tokens``, ``ratelimit``, ``handlers`` and ``errors`` (every error as
``{"error": ...}``), ``redis_server`` (the embedded Redis), ``serve`` and ``commands`` (CLI).
"""
