"""Pick a store from a url, so configuration can name one as a string."""

from __future__ import annotations

from msagent.errors import ConfigError
from msagent.model_pool.stores.base import Store
from msagent.model_pool.stores.memory import MemoryStore
from msagent.model_pool.stores.redis_store import DEFAULT_PREFIX, RedisStore

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def make_store(url: str | None = None, prefix: str = DEFAULT_PREFIX) -> Store:
    """Build the store a url names: in-process memory by default, Redis for ``redis://...``.

    Args:
        url: None, ``""`` or ``"memory"`` for a MemoryStore; ``redis://``, ``rediss://`` or
            ``unix://`` for a RedisStore.
        prefix: Key prefix of a RedisStore (ignored for memory).

    Returns:
        A new store.

    Raises:
        ConfigError: If the url names no known store.
    """
    if url is None or url.strip().lower() in ("", "memory"):
        return MemoryStore()
    if url.startswith(_REDIS_SCHEMES):
        return RedisStore(url, prefix=prefix)
    raise ConfigError(f"unknown model pool store {url!r}: use 'memory' or a redis://host:port/db url")
