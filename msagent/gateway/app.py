"""The gateway's HTTP API (FastAPI): game clients upload episodes and download models.

Routes (``Authorization: Bearer <token>`` with the scope named; a route of one game also
needs a token valid for that game, else 403 whether the game exists or not):

- ``POST /v1/games/{game}/episodes`` (upload): an episode as msgpack or JSON (optionally
  gzipped); checked against the game's schema and put on the Redis stream once per
  (client, episode_id, part): 201 stored, 200 a repeat of an earlier upload.
- ``GET /v1/games`` (download): the token's games and their upload schemas.
- ``GET /v1/games/{game}/model`` and ``/models/{version}`` (download): the newest model's
  manifest and a version's ONNX bytes (ETags; ``If-None-Match`` gives 304).
- ``GET /v1/admin/stats`` (admin): the stream's length, pending and dead-letter counts.
- ``GET /healthz`` (no token): whether Redis answers.

Every error is ``{"error": "<reason>"}`` (see :mod:`msagent.gateway.handlers`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

from fastapi import FastAPI, Request
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from starlette.responses import Response

from msagent.config.gateway import GatewayConfig, load_gateway_config
from msagent.credentials import expand
from msagent.experience.schema import GameSchema
from msagent.experience.stream_keys import StreamKeys
from msagent.gateway.api_docs import add_api_docs
from msagent.gateway.body import CONTENT_TYPES
from msagent.gateway.errors import Refused, retry_after
from msagent.gateway.fast_upload import UPLOAD_ROUTE, UploadFastPath
from msagent.gateway.handlers import error_response, install_error_handlers, json_response
from msagent.gateway.heap import return_freed_memory
from msagent.gateway.http_limits import HttpLimits
from msagent.gateway.model_routes import add_model_routes
from msagent.gateway.producer import StreamProducer
from msagent.gateway.ratelimit import RateLimiter, SharedRateLimiter, lease_size
from msagent.gateway.redis_server import die_with_parent
from msagent.gateway.tokens import Principal, TokenStore, warn_of_tokens_for_all_games
from msagent.gateway.uploads import Uploads

_log = logging.getLogger("msagent.gateway")

BEARER = "bearer"
"""Name of the bearer-token security scheme in the OpenAPI document."""

_CHALLENGE = {"WWW-Authenticate": "Bearer"}

_NO_TELEMETRY: Any = {"tracing": False, "metrics": False, "logs": False}
"""FastAPI's OpenTelemetry hooks off: looking for a provider on every request cost ~7% of
the upload path, and the gateway exports no traces."""


class Gateway:
    """What the routes share: schemas, tokens, rate limits, the stream producer, the config.

    Args:
        cfg: The gateway config.
        redis_url: The Redis the stream lives in.
    """

    def __init__(self, cfg: GatewayConfig, redis_url: str) -> None:
        gw = cfg.gateway
        self.cfg = cfg
        self.schemas: dict[str, GameSchema] = cfg.schemas()
        self.tokens = TokenStore.of_data_dir(cfg.data_dir)
        warn_of_tokens_for_all_games(self.tokens)
        self.max_body_bytes = gw.max_body_bytes
        self.redis = Redis.from_url(expand(redis_url),  # ${VAR} placeholders: at connection
                                    socket_connect_timeout=2, socket_timeout=5,
                                    retry=Retry(NoBackoff(), 1))
        self.producer = StreamProducer(self.redis, StreamKeys(gw.prefix),
                                       gw.idempotency_ttl_s, gw.max_backlog)
        self.limiter: RateLimiter | SharedRateLimiter = (
            SharedRateLimiter(self.redis, gw.prefix, gw.rate_per_s, gw.burst,
                              lease_size(gw.rate_per_s, gw.burst, gw.workers))
            if cfg.shared_rate_limits else RateLimiter(gw.rate_per_s, gw.burst))
        self.byte_limiter = RateLimiter(gw.rate_bytes_per_s, gw.byte_burst)  # per process

    def principal(self, headers: Mapping[str, str], scope: str,
                  game: str | None = None) -> Principal:
        """The caller's token's principal, if it has ``scope`` and is valid for ``game`` (when
        given); else 401 or 403, before the game's existence is looked at (so a token cannot
        probe which games exist)."""
        header = headers.get("authorization", "")
        if header[:7].lower() != "bearer " or not header[7:].strip():
            raise Refused(401, "missing bearer token (Authorization: Bearer <token>)",
                          _CHALLENGE)
        principal = self.tokens.authenticate(header[7:].strip())
        if principal is None:
            raise Refused(401, "invalid, revoked or expired token", _CHALLENGE)
        if scope not in principal.scopes:
            raise Refused(403, f"this token lacks the {scope!r} scope")
        if game is not None and not principal.may_use(game):
            raise Refused(403, f"this token is not valid for game {game!r}")
        return principal

    async def rate_wait(self, client: str) -> float:
        """Seconds ``client`` must wait before this upload (0.0: go ahead); 503 when shared
        limits cannot be reached."""
        if isinstance(self.limiter, RateLimiter):
            return self.limiter.take(client)
        async with self.producer.unavailable_as_503():
            return await self.limiter.take(client)

    def schema(self, game: str) -> GameSchema:
        """The schema of a configured game; else 404."""
        schema = self.schemas.get(game)
        if schema is None:
            raise Refused(404, "unknown game")
        return schema

    @contextlib.asynccontextmanager
    async def lifespan(self, app: FastAPI) -> AsyncIterator[None]:
        """Create the consumer group at start-up (if Redis is up); close Redis at shutdown."""
        try:
            await self.producer.ensure_group()
        except Exception as exc:  # Redis down: uploads answer 503 and retry it later
            _log.warning("cannot create the consumer group yet: %s", exc)
        yield
        await self.redis.aclose()


def build_app(cfg: GatewayConfig, redis_url: str) -> FastAPI:
    """The gateway's FastAPI app for a config and the Redis its stream lives in."""
    gateway = Gateway(cfg, redis_url)
    app = FastAPI(title="msagent gateway", version="1",
                  description="Game clients upload episodes and download published models.",
                  lifespan=gateway.lifespan, telemetry=_NO_TELEMETRY,
                  docs_url=None, redoc_url=None,  # no CDN scripts: see api_docs
                  redirect_slashes=False)  # a redirect's Location came from the Host header
    app.state.gateway = gateway
    app.state.http_limits = HttpLimits.of(cfg.gateway)  # read by msagent serve's protocol
    if cfg.gateway.docs:
        add_api_docs(app)
    install_error_handlers(app)
    _upload_route(app, gateway)
    _info_routes(app, gateway)
    add_model_routes(app, gateway)
    _declare_bearer(app)
    return app


CONFIG_ENV, REDIS_ENV, PARENT_ENV = ("MSAGENT_GATEWAY_CONFIG", "MSAGENT_GATEWAY_REDIS",
                                      "MSAGENT_GATEWAY_PARENT")
"""Environment variables through which ``msagent serve`` hands each worker process its config
file, its Redis URL and its own pid (see :func:`app_from_environment`)."""


def app_from_environment() -> FastAPI:
    """The app of one worker process of ``msagent serve`` (uvicorn's factory, in the worker)."""
    die_with_parent()  # a worker outliving a killed ``msagent serve`` would hold the port
    return_freed_memory()
    if os.getppid() != int(os.environ[PARENT_ENV]):  # it died before that took effect
        raise SystemExit("msagent serve is gone")
    return build_app(load_gateway_config(os.environ[CONFIG_ENV]), os.environ[REDIS_ENV])


def _upload_route(app: FastAPI, gw: Gateway) -> None:
    """``POST /v1/games/{game}/episodes``: the hot path, answered by :class:`UploadFastPath`
    outside all of FastAPI's middleware, and in ``msagent serve`` mostly by its
    ``UploadProtocol`` (the route declares it in the OpenAPI document, with the same
    :class:`Uploads` behind every path)."""
    uploads = Uploads(gw)

    async def upload(game: str, request: Request) -> Response:
        """Upload one episode (or consecutive steps of one) of ``game``."""
        return await uploads(game, request)

    app.add_api_route(UPLOAD_ROUTE, upload, methods=["POST"], status_code=201,
                      tags=["experience"], openapi_extra=_UPLOAD_OPENAPI,
                      responses=_UPLOAD_RESPONSES, name="upload_episode")
    app.state.uploads = uploads  # msagent serve's UploadProtocol calls it directly
    build_stack = app.build_middleware_stack
    app.build_middleware_stack = lambda: UploadFastPath(build_stack(), uploads)  # type: ignore


def _info_routes(app: FastAPI, gw: Gateway) -> None:
    """Games and schemas, health, admin stats."""

    @app.get("/v1/games", tags=["games"], openapi_extra=_SECURED)
    async def list_games(request: Request) -> dict[str, Any]:
        """The games uploads are accepted for that the token is valid for, with their upload
        schemas."""
        principal = gw.principal(request.headers, "download")
        return {"games": [s.model_dump(mode="json") for name, s in gw.schemas.items()
                          if principal.may_use(name)]}

    @app.get("/healthz", tags=["operations"])
    async def healthz() -> Response:
        """200 when Redis answers PING, else 503 (no token needed)."""
        if await gw.producer.healthy():
            return json_response(200, {"redis": "ok"})
        return error_response(503, "redis unavailable", retry_after(1))

    @app.get("/v1/admin/stats", tags=["operations"], openapi_extra=_SECURED)
    async def admin_stats(request: Request) -> dict[str, Any]:
        """Stream length (not yet ingested), pending (delivered, not acknowledged), dead letters."""
        gw.principal(request.headers, "admin")
        return await gw.producer.stats()


def _declare_bearer(app: FastAPI) -> None:
    """Add the bearer-token security scheme to the generated OpenAPI document."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        """FastAPI's document, plus the scheme the routes' ``security`` entries name."""
        schema = generate()
        schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
        schemes[BEARER] = {"type": "http", "scheme": "bearer",
                           "description": "A token from `msagent tokens create`."}
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


_SECURED = {"security": [{BEARER: []}]}

_ARRAY = {"oneOf": [
    {"type": "object", "description": "msgpack: dtype (<f4, <f8, <i8, <i4, |u1, |b1), shape "
                                      "and raw little-endian bytes",
     "properties": {"dtype": {"type": "string"}, "shape": {"type": "array"},
                    "data": {"type": "string", "format": "binary"}},
     "required": ["dtype", "shape", "data"]},
    {"type": "array", "description": "JSON: nested lists of numbers, time axis first"}]}

_UPLOAD_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["episode_id", "observations", "actions", "rewards", "terminated", "truncated"],
    "properties": {
        "episode_id": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$",
                       "description": "Idempotency key: a retry with the same id (and part) "
                                      "is stored once"},
        "part": {"type": "integer", "minimum": 0, "default": 0,
                 "description": "Index of this batch of steps within the episode"},
        "client_version": {"type": "string", "maxLength": 64},
        "model_version": {"type": ["integer", "null"], "minimum": 0,
                          "description": "The published model version that acted"},
        "observations": _ARRAY, "actions": _ARRAY, "rewards": _ARRAY,
        "log_probs": {**_ARRAY, "description": "Behaviour log-probabilities (optional)"},
        "terminated": {"type": "boolean"}, "truncated": {"type": "boolean"},
    },
}

_UPLOAD_OPENAPI = {
    **_SECURED,
    "requestBody": {"required": True, "content": {
        media: {"schema": _UPLOAD_SCHEMA} for media in CONTENT_TYPES}},
}

_UPLOAD_RESPONSES: dict[int | str, dict[str, Any]] = {
    201: {"description": 'Stored: `{"status": "stored", "entry": "<stream id>"}`'},
    200: {"description": 'Already stored by an earlier upload: `{"status": "duplicate", ...}`'},
    400: {"description": "The body does not decode"},
    401: {"description": "Missing, unknown, revoked or expired token"},
    403: {"description": "The token lacks the upload scope or is not valid for the game"},
    404: {"description": "Unknown game"},
    413: {"description": "Body (after decompression) larger than max_body_bytes, or holding "
                         "more than an upload of the game can (the reason names the limit)"},
    415: {"description": "Content-Type other than msgpack or JSON, or an unknown encoding"},
    422: {"description": "The episode violates the game's schema (the reason names the field)"},
    429: {"description": "Rate limited: uploads or body bytes per second (see Retry-After)"},
    503: {"description": "The stream is unavailable or its backlog too high (see Retry-After)"},
}
