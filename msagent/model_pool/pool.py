"""The model pool: versioned policy snapshots with metadata, kept in a Store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msagent.errors import ConfigError
from msagent.model_pool.errors import InvalidMetadataError, InvalidPolicyIdError, SnapshotNotFoundError
from msagent.model_pool.metadata_codec import decode_metadata, encode_metadata
from msagent.model_pool.snapshot import Snapshot
from msagent.model_pool.stores import MemoryStore, Store, StoredSnapshot
from msagent.model_pool.weights_codec import decode_weights, encode_weights
from msagent.vocabulary import ModelKey, PolicyId, Version

DEFAULT_KEEP_LAST = 10
FROZEN = "frozen"


class ModelPool:
    """Versioned snapshots of policies, so learners can publish them and the league can pick opponents.

    Every push gets the next version of its policy (1, 2, ...), then the policy's snapshots
    older than its ``keep_last`` newest are deleted, except frozen ones. All state lives in the
    store, whose operations are atomic, so one pool may be called from many threads and many
    pools (in many processes, with a RedisStore) may share one store.
    """

    def __init__(self, store: Store | None = None, keep_last: int | None = DEFAULT_KEEP_LAST) -> None:
        """Use ``store`` (a new MemoryStore by default) and keep ``keep_last`` snapshots per policy.

        Args:
            store: Where snapshots live; pools sharing a store share snapshots.
            keep_last: How many of each policy's newest snapshots survive pruning (frozen ones
                always do); None keeps everything.

        Raises:
            ConfigError: If keep_last is not a positive int or None.
        """
        if keep_last is not None and (type(keep_last) is not int or keep_last < 1):
            raise ConfigError(f"keep_last must be a positive int or None, got {keep_last!r}")
        self.store = store if store is not None else MemoryStore()
        self.keep_last = keep_last

    def push(
        self, policy_id: PolicyId, weights: Mapping[str, Any],
        metadata: Mapping[str, Any] | None = None, at_least: Version = 0,
    ) -> ModelKey:
        """Store a new snapshot of a policy under its next version, then prune old ones.

        Args:
            policy_id: The policy the weights belong to (a non-empty str).
            weights: Parameter name -> numpy array (bool, ints, float16/32/64).
            metadata: Plain values to keep with the snapshot; ``frozen=True`` freezes it at once.
            at_least: The smallest version to use (a learner passes its parameter version, so
                snapshot versions follow training and a resumed run never reuses one).

        Returns:
            The key of the new snapshot.

        Raises:
            InvalidPolicyIdError: If policy_id is empty or not a str.
            InvalidWeightsError: If an entry of weights is not a storable numpy array.
            InvalidMetadataError: If metadata holds a non-plain value or a non-bool ``frozen``.
        """
        _check_policy_id(policy_id)
        user_metadata, frozen = _split_frozen(metadata)
        stored = StoredSnapshot(encode_weights(weights), encode_metadata(user_metadata), frozen)
        key = ModelKey(policy_id, self.store.next_version(policy_id, at_least))
        self.store.put(key, stored)
        if self.keep_last is not None:
            self.store.prune(policy_id, self.keep_last)
        return key

    def pull(self, key: ModelKey) -> Snapshot:
        """Fetch one snapshot, decoded, so an actor or evaluator can load exactly that version.

        Raises:
            SnapshotNotFoundError: If the key was never pushed or has been pruned.
        """
        _check_key(key)
        stored = self.store.get(key)
        if stored is None:
            raise SnapshotNotFoundError(key.policy_id, key.version, self.store.versions(key.policy_id))
        return _decode(key, stored)

    def pull_latest(self, policy_id: PolicyId) -> Snapshot:
        """Fetch the newest snapshot of a policy, so a consumer can follow training.

        Raises:
            SnapshotNotFoundError: If the policy has no snapshot.
        """
        _check_policy_id(policy_id)
        version = self.store.latest_version(policy_id)
        while version is not None:
            try:
                return self.pull(ModelKey(policy_id, version))
            except SnapshotNotFoundError:  # pruned between the two reads by newer pushes
                newer = self.store.latest_version(policy_id)
                # each retry reads a newer version, so this ends once the pushes pause (a
                # fixed number of tries failed on a loaded machine against a fast writer)
                version = newer if newer is not None and newer > version else None
        raise SnapshotNotFoundError(policy_id, None, self.store.versions(policy_id))

    def latest_version(self, policy_id: PolicyId) -> Version | None:
        """Return a policy's newest version (None if it has none) without moving any weights."""
        _check_policy_id(policy_id)
        return self.store.latest_version(policy_id)

    def list(self, policy_id: PolicyId | None = None) -> list[ModelKey]:
        """List stored snapshot keys, sorted, of one policy or of all of them."""
        if policy_id is not None:
            _check_policy_id(policy_id)
        policies = self.store.policies() if policy_id is None else [policy_id]
        return sorted(ModelKey(p, v) for p in policies for v in self.store.versions(p))

    def policies(self) -> list[PolicyId]:
        """List the policies that have been pushed, sorted."""
        return self.store.policies()

    def freeze(self, key: ModelKey) -> None:
        """Exempt a snapshot from pruning for good (e.g. when it joins the league as an opponent).

        Raises:
            SnapshotNotFoundError: If the key was never pushed or has been pruned.
        """
        _check_key(key)
        if not self.store.freeze(key):
            raise SnapshotNotFoundError(key.policy_id, key.version, self.store.versions(key.policy_id))

    def delete(self, key: ModelKey) -> bool:
        """Delete one snapshot even if frozen (a league's retention); False if not stored."""
        _check_key(key)
        return self.store.delete(key)

    def __repr__(self) -> str:
        """Show the store and the pruning setting."""
        return f"ModelPool(store={self.store!r}, keep_last={self.keep_last})"


def _check_policy_id(policy_id: object) -> None:
    """Refuse policy ids that cannot name a policy."""
    if not isinstance(policy_id, str) or not policy_id:
        raise InvalidPolicyIdError(f"policy_id must be a non-empty str, got {policy_id!r}")


def _check_key(key: object) -> None:
    """Refuse anything but a ModelKey with a valid policy id and an int version."""
    if not isinstance(key, ModelKey):
        raise TypeError(f"expected a ModelKey, got {type(key).__name__}: {key!r}")
    _check_policy_id(key.policy_id)
    if type(key.version) is not int:
        raise TypeError(f"ModelKey.version must be an int, got {key.version!r}")


def _split_frozen(metadata: Mapping[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """Separate the ``frozen`` flag (kept by the store) from the user's metadata."""
    if metadata is None:
        return {}, False
    if not isinstance(metadata, Mapping):
        raise InvalidMetadataError(f"metadata must be a dict, got {type(metadata).__name__}")
    user_metadata = dict(metadata)
    frozen = user_metadata.pop(FROZEN, False)
    if not isinstance(frozen, bool):
        raise InvalidMetadataError(f"metadata[{FROZEN!r}] must be a bool, got {frozen!r}")
    return user_metadata, frozen


def _decode(key: ModelKey, stored: StoredSnapshot) -> Snapshot:
    """Turn stored bytes back into arrays and metadata, with the store's frozen flag."""
    metadata = decode_metadata(stored.metadata)
    metadata[FROZEN] = stored.frozen
    return Snapshot(key=key, weights=decode_weights(stored.weights), metadata=metadata)
