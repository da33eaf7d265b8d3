"""Where snapshots live: in this process (MemoryStore; SpillingMemoryStore with a memory
budget for frozen snapshots) or on a Redis server (RedisStore)."""

from msagent.model_pool.stores.base import Store, StoredSnapshot
from msagent.model_pool.stores.factory import make_store
from msagent.model_pool.stores.memory import MemoryStore
from msagent.model_pool.stores.redis_store import DEFAULT_PREFIX, RedisKeys, RedisStore
from msagent.model_pool.stores.spilling import SpillingMemoryStore

__all__ = ["DEFAULT_PREFIX", "MemoryStore", "RedisKeys", "RedisStore", "SpillingMemoryStore",
           "Store", "StoredSnapshot", "make_store"]
