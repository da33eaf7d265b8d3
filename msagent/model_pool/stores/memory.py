"""The default store: an in-process dict, guarded by one lock."""

from __future__ import annotations

import threading
from dataclasses import replace

from msagent.model_pool.stores.base import Store, StoredSnapshot
from msagent.vocabulary import ModelKey, PolicyId, Version


class MemoryStore(Store):
    """Keeps snapshots in this process's memory; share one instance to share snapshots."""

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self._snapshots: dict[PolicyId, dict[Version, StoredSnapshot]] = {}
        self._counters: dict[PolicyId, Version] = {}

    def next_version(self, policy_id: PolicyId, at_least: Version = 0) -> Version:
        """Reserve the next version of a policy (at least ``at_least``), never twice."""
        with self._lock:
            version = max(self._counters.get(policy_id, 0) + 1, at_least)
            self._counters[policy_id] = version
            return version

    def put(self, key: ModelKey, snapshot: StoredSnapshot) -> None:
        """Store a snapshot under a reserved key and add it to the policy's index."""
        with self._lock:
            self._snapshots.setdefault(key.policy_id, {})[key.version] = snapshot

    def get(self, key: ModelKey) -> StoredSnapshot | None:
        """Read a snapshot, or None when it is not stored (never pushed or pruned)."""
        with self._lock:
            return self._snapshots.get(key.policy_id, {}).get(key.version)

    def versions(self, policy_id: PolicyId) -> list[Version]:
        """List the stored versions of a policy, oldest first."""
        with self._lock:
            return sorted(self._snapshots.get(policy_id, {}))

    def latest_version(self, policy_id: PolicyId) -> Version | None:
        """Return the highest stored version of a policy without reading any weights."""
        with self._lock:
            return max(self._snapshots.get(policy_id, {}), default=None)

    def policies(self) -> list[PolicyId]:
        """List the policies that have had a snapshot stored, sorted."""
        with self._lock:
            return sorted(self._snapshots)

    def freeze(self, key: ModelKey) -> bool:
        """Mark a stored snapshot frozen; return False when it is not stored."""
        with self._lock:
            by_version = self._snapshots.get(key.policy_id, {})
            if key.version not in by_version:
                return False
            by_version[key.version] = replace(by_version[key.version], frozen=True)
            return True

    def delete(self, key: ModelKey) -> bool:
        """Delete one snapshot, frozen or not; False if it is not stored."""
        with self._lock:
            return self._snapshots.get(key.policy_id, {}).pop(key.version, None) is not None

    def prune(self, policy_id: PolicyId, keep_last: int) -> list[Version]:
        """Atomically delete a policy's snapshots older than its ``keep_last`` newest, except frozen ones."""
        with self._lock:
            by_version = self._snapshots.get(policy_id, {})
            versions = sorted(by_version)
            old = versions[: max(len(versions) - keep_last, 0)]
            deleted = [v for v in old if not by_version[v].frozen]
            for version in deleted:
                del by_version[version]
            return deleted
