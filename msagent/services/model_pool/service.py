"""The model pool as a service: a thin wrapper around ``msagent.model_pool.ModelPool``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from msagent.model_pool import ModelPool, Snapshot, make_store
from msagent.model_pool.stores.redis_store import DEFAULT_PREFIX
from msagent.runtime import call, register
from msagent.vocabulary import ModelKey, PolicyId, Version

log = logging.getLogger(__name__)


class ModelPoolService:
    """Versioned policy snapshots; in memory by default, Redis when ``url`` names a server.

    In memory, frozen snapshots beyond ``memory_mib`` MiB of weights go to files in
    ``spill_dir`` (the least recently used first; 0 or no folder: all stay in memory).
    """

    def __init__(self, url: str | None = None, keep_last: int | None = 10,
                 namespace: str = "", spill_dir: str | None = None,
                 memory_mib: float = 0) -> None:
        prefix = f"{DEFAULT_PREFIX}:{namespace}" if namespace else DEFAULT_PREFIX
        try:
            store = make_store(url or None, prefix=prefix,
                               spill_dir=Path(spill_dir) if spill_dir else None,
                               memory_bytes=int(memory_mib * 2**20))
        except OSError as exc:  # e.g. on a cluster node without the run directory's disk
            log.warning("model pool: cannot spill snapshots to %s (%s); keeping all of them "
                        "in memory", spill_dir, exc)
            store = make_store(url or None, prefix=prefix)
        self.pool = ModelPool(store, keep_last=keep_last or None)

    @register(concurrent=True)
    def push(self, policy_id: PolicyId, weights: dict[str, Any],
             metadata: dict[str, Any] | None = None, at_least: Version = 0) -> ModelKey:
        """Store a snapshot under the policy's next version (at least ``at_least``)."""
        return self.pool.push(policy_id, weights, metadata, at_least)

    @register(concurrent=True, idempotent=True)
    def pull(self, key: ModelKey) -> Snapshot:
        """One snapshot by key."""
        return self.pool.pull(key)

    @register(concurrent=True, idempotent=True)
    def pull_latest(self, policy_id: PolicyId) -> Snapshot:
        """The newest snapshot of a policy."""
        return self.pool.pull_latest(policy_id)

    @register(concurrent=True, idempotent=True)
    def latest_version(self, policy_id: PolicyId) -> Version | None:
        """The newest version number of a policy (no weights move)."""
        return self.pool.latest_version(policy_id)

    @register(concurrent=True, idempotent=True)
    def list(self, policy_id: PolicyId | None = None) -> list[ModelKey]:
        """Stored keys, sorted."""
        return self.pool.list(policy_id)

    @register(concurrent=True)
    def freeze(self, key: ModelKey) -> None:
        """Protect a snapshot from pruning."""
        self.pool.freeze(key)

    @register(concurrent=True, idempotent=True)
    def delete(self, keys: list[ModelKey]) -> int:
        """Delete snapshots the league retired (frozen or not); how many were stored."""
        return sum(self.pool.delete(key) for key in keys)


class PoolClient:
    """The calls other services make to ``ModelPoolService``, typed."""

    @staticmethod
    def push(policy_id: PolicyId, weights: dict[str, Any], metadata: dict[str, Any],
             at_least: Version = 0) -> ModelKey:
        """Store a snapshot under the policy's next version (at least ``at_least``); its key."""
        return call(ModelPoolService.push, policy_id, weights, metadata, at_least)

    @staticmethod
    def pull(key: ModelKey) -> Snapshot:
        """The snapshot stored under ``key``."""
        return call(ModelPoolService.pull, key)

    @staticmethod
    def keys(policy_id: PolicyId | None = None) -> list[ModelKey]:
        """The stored keys (of one policy, or all)."""
        return call(ModelPoolService.list, policy_id)
