"""What a model pool needs from storage: a few operations, each atomic on its own."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from msagent.vocabulary import ModelKey, PolicyId, Version


@dataclass(frozen=True)
class StoredSnapshot:
    """One snapshot as a store holds it: encoded weights, encoded metadata and the frozen flag."""

    weights: bytes
    metadata: bytes
    frozen: bool


class Store(ABC):
    """Byte storage for snapshots, shared by every pool (thread or process) that uses it.

    Every method must be atomic on its own, so that pools built on the same store stay
    consistent without a lock of their own. Stores know nothing of arrays or pruning rules.
    """

    @abstractmethod
    def next_version(self, policy_id: PolicyId, at_least: Version = 0) -> Version:
        """Reserve the next version of a policy (1, 2, ..., or ``at_least`` if larger), never
        handing one out twice."""

    @abstractmethod
    def put(self, key: ModelKey, snapshot: StoredSnapshot) -> None:
        """Store a snapshot under a reserved key and add it to the policy's index."""

    @abstractmethod
    def get(self, key: ModelKey) -> StoredSnapshot | None:
        """Read a snapshot, or None when it is not stored (never pushed or pruned)."""

    @abstractmethod
    def versions(self, policy_id: PolicyId) -> list[Version]:
        """List the stored versions of a policy, oldest first."""

    @abstractmethod
    def latest_version(self, policy_id: PolicyId) -> Version | None:
        """Return the highest stored version of a policy without reading any weights."""

    @abstractmethod
    def policies(self) -> list[PolicyId]:
        """List the policies that have had a snapshot stored, sorted."""

    @abstractmethod
    def freeze(self, key: ModelKey) -> bool:
        """Mark a stored snapshot frozen; return False when it is not stored."""

    @abstractmethod
    def delete(self, key: ModelKey) -> bool:
        """Delete one snapshot, frozen or not (a league's retention); False if not stored."""

    @abstractmethod
    def prune(self, policy_id: PolicyId, keep_last: int) -> list[Version]:
        """Atomically delete a policy's snapshots older than its ``keep_last`` newest, except frozen ones.

        Returns:
            The deleted versions, oldest first.
        """

    def close(self) -> None:
        """Release connections; the default store holds none."""
