"""The model pool as a service: a thin wrapper around ``msagent.model_pool.ModelPool``."""

from __future__ import annotations

from typing import Any

from msagent.model_pool import ModelPool, Snapshot, make_store
from msagent.model_pool.stores.redis_store import DEFAULT_PREFIX
from msagent.runtime import register
from msagent.vocabulary import ModelKey, PolicyId, Version


class ModelPoolService:
    """Versioned policy snapshots; in memory by default, Redis when ``url`` names a server."""

    def __init__(self, url: str | None = None, keep_last: int | None = 10,
                 namespace: str = "") -> None:
        prefix = f"{DEFAULT_PREFIX}:{namespace}" if namespace else DEFAULT_PREFIX
        self.pool = ModelPool(make_store(url or None, prefix=prefix), keep_last=keep_last or None)

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
