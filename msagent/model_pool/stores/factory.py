"""Pick a store from a url, so configuration can name one as a string."""

from __future__ import annotations

from pathlib import Path

from msagent.credentials import redact
from msagent.errors import ConfigError
from msagent.model_pool.stores.base import Store
from msagent.model_pool.stores.memory import MemoryStore
from msagent.model_pool.stores.redis_store import DEFAULT_PREFIX, RedisStore
from msagent.model_pool.stores.spilling import SpillingMemoryStore

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def make_store(url: str | None = None, prefix: str = DEFAULT_PREFIX,
               spill_dir: Path | None = None, memory_bytes: int = 0) -> Store:
    """Build the store a url names: in-process memory by default, Redis for ``redis://...``.

    Args:
        url: None, ``""`` or ``"memory"`` for a MemoryStore; ``redis://``, ``rediss://`` or
            ``unix://`` for a RedisStore (its password may be a ``${VAR}`` or
            ``${file:/path}`` placeholder, expanded when it connects).
        prefix: Key prefix of a RedisStore (ignored for memory).
        spill_dir: With ``memory_bytes`` > 0, an in-memory store keeps at most that many
            bytes of frozen snapshots' weights in memory and the rest in files here
            (:class:`SpillingMemoryStore`); ignored for Redis.
        memory_bytes: That budget (0: everything in memory).

    Returns:
        A new store.

    Raises:
        ConfigError: If the url names no known store, or a secret it names is missing.
    """
    if url is None or url.strip().lower() in ("", "memory"):
        if spill_dir is not None and memory_bytes > 0:
            return SpillingMemoryStore(spill_dir, memory_bytes)
        return MemoryStore()
    if url.startswith(_REDIS_SCHEMES):
        return RedisStore(url, prefix=prefix)
    raise ConfigError(f"unknown model pool store {redact(url)!r}: use 'memory' or a "
                      "redis://host:port/db url")
