"""Experience from outside game clients: the upload record, a game's declared schema, the
Redis stream it travels on, the Parquet store it lands in, and fragments read back for training.

Nothing here imports Ray or FastAPI; the gateway (``msagent.gateway``) and the training data
source (``msagent.services.store_reader``) are thin wrappers around it.
"""
