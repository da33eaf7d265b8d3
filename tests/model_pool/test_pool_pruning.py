"""Keep-last-K pruning deletes old snapshots but never frozen ones."""

from __future__ import annotations

import numpy as np
import pytest
from pool_samples import StoreFactory

from msagent.errors import ConfigError
from msagent.model_pool import ModelPool, SnapshotNotFoundError
from msagent.vocabulary import ModelKey


def push_n(pool: ModelPool, n: int, policy: str = "main") -> list[ModelKey]:
    """Push n tiny snapshots of one policy."""
    return [pool.push(policy, {"w": np.array(i, dtype=np.int64)}) for i in range(n)]


def versions(pool: ModelPool, policy: str = "main") -> list[int]:
    """The stored versions of a policy."""
    return [k.version for k in pool.list(policy)]


def test_keeps_only_the_last_k_per_policy(new_store: StoreFactory) -> None:
    """Pruning bounds memory per policy without touching other policies."""
    pool = ModelPool(new_store(), keep_last=3)
    push_n(pool, 6)
    push_n(pool, 2, policy="other")
    assert versions(pool) == [4, 5, 6]
    assert versions(pool, "other") == [1, 2]
    with pytest.raises(SnapshotNotFoundError):
        pool.pull(ModelKey("main", 3))


def test_frozen_snapshots_survive_pruning(new_store: StoreFactory) -> None:
    """League opponents are frozen and must outlive the rolling window."""
    pool = ModelPool(new_store(), keep_last=2)
    keys = push_n(pool, 2)
    pool.freeze(keys[0])
    push_n(pool, 6)
    assert versions(pool) == [1, 7, 8]
    assert pool.pull(keys[0]).metadata["frozen"] is True
    assert pool.pull(ModelKey("main", 8)).metadata["frozen"] is False


def test_push_with_frozen_metadata_is_frozen_from_the_start(new_store: StoreFactory) -> None:
    """frozen=True at push time must protect the snapshot at once."""
    pool = ModelPool(new_store(), keep_last=1)
    first = pool.push("main", {"w": np.zeros(1)}, {"frozen": True, "note": "league seed"})
    push_n(pool, 3)
    assert pool.pull(first).metadata == {"frozen": True, "note": "league seed"}
    assert versions(pool) == [1, 4]


def test_freezing_a_missing_snapshot_fails(new_store: StoreFactory) -> None:
    """Freezing a pruned snapshot must fail loudly, not resurrect it."""
    pool = ModelPool(new_store(), keep_last=1)
    push_n(pool, 2)
    with pytest.raises(SnapshotNotFoundError, match="main:1"):
        pool.freeze(ModelKey("main", 1))
    assert versions(pool) == [2]


def test_keep_last_none_keeps_everything(new_store: StoreFactory) -> None:
    """keep_last=None turns pruning off."""
    pool = ModelPool(new_store(), keep_last=None)
    push_n(pool, 4)
    assert versions(pool) == [1, 2, 3, 4]


@pytest.mark.parametrize("keep_last", [0, -1, 1.5, True])
def test_keep_last_must_be_positive(keep_last: object) -> None:
    """A pool that keeps nothing (or a bool) is a configuration mistake."""
    with pytest.raises(ConfigError):
        ModelPool(keep_last=keep_last)  # type: ignore[arg-type]


def test_a_retired_snapshot_is_deleted_even_when_frozen(new_store: StoreFactory,
                                                         tmp_path) -> None:
    """A league's retention deletes frozen snapshots one by one (a spilled one's file too)."""
    pool = ModelPool(new_store(), keep_last=None)
    keys = push_n(pool, 3)
    for key in keys:
        pool.freeze(key)
    assert pool.delete(keys[0]) and not pool.delete(keys[0])  # gone, and said so once
    assert versions(pool) == [2, 3]
    assert pool.pull(keys[1]).weights["w"] == 1  # the others untouched
    with pytest.raises(SnapshotNotFoundError):
        pool.pull(keys[0])
    spill = tmp_path / "spill"
    if spill.exists():  # the spilling store: only the newest stays in memory
        assert not list(spill.glob("6d61696e@1.*"))
