"""The model pool: versioned policy snapshots with metadata, in memory or on Redis.

Weights travel as safetensors and metadata as msgpack, so nothing is ever unpickled::

    pool = ModelPool(make_store("redis://127.0.0.1:6379/0"), keep_last=10)
    key = pool.push("main", {"fc.weight": w}, {"step": 1000})
    snapshot = pool.pull_latest("main")
"""

from msagent.model_pool.errors import (
    InvalidMetadataError,
    InvalidPolicyIdError,
    InvalidWeightsError,
    SnapshotNotFoundError,
)
from msagent.model_pool.pool import DEFAULT_KEEP_LAST, ModelPool
from msagent.model_pool.snapshot import Snapshot
from msagent.model_pool.stores import (MemoryStore, RedisStore, SpillingMemoryStore, Store,
                                        StoredSnapshot, make_store)

__all__ = [
    "DEFAULT_KEEP_LAST",
    "InvalidMetadataError",
    "InvalidPolicyIdError",
    "InvalidWeightsError",
    "MemoryStore",
    "ModelPool",
    "RedisStore",
    "SpillingMemoryStore",
    "SnapshotNotFoundError",
    "Snapshot",
    "Store",
    "StoredSnapshot",
    "make_store",
]
