"""Push, pull, list and versions behave the same on every store."""

from __future__ import annotations

import numpy as np
import pytest
from pool_samples import StoreFactory, assert_bit_exact, sample_weights

from msagent.model_pool import ModelPool
from msagent.vocabulary import ModelKey


@pytest.fixture
def pool(new_store: StoreFactory) -> ModelPool:
    """A pool that prunes nothing unless a test asks it to."""
    return ModelPool(new_store(), keep_last=None)


def test_round_trip_is_bit_exact(pool: ModelPool) -> None:
    """Every store must return exactly the weights and metadata pushed."""
    weights = sample_weights()
    metadata = {"step": 12345, "loss": 1 / 3, "tags": ["a", "b"], "raw": b"\x00\x01", "nested": {"x": None}}
    key = pool.push("main", weights, metadata)
    snapshot = pool.pull(key)
    assert snapshot.key == key
    assert_bit_exact(snapshot.weights, weights)
    assert snapshot.metadata == {**metadata, "frozen": False}


def test_versions_start_at_one_and_grow_by_one_per_policy(pool: ModelPool) -> None:
    """Versions are per policy and dense, so they can be compared and listed."""
    keys = [pool.push(p, {"w": np.zeros(1)}) for p in ["main", "main", "exploiter", "main", "exploiter"]]
    assert [k.version for k in keys] == [1, 2, 1, 3, 2]
    assert [k.policy_id for k in keys] == ["main", "main", "exploiter", "main", "exploiter"]


def test_pull_latest_and_latest_version_follow_pushes(pool: ModelPool) -> None:
    """Consumers following training must see the newest snapshot."""
    assert pool.latest_version("main") is None
    for step in range(3):
        pool.push("main", {"w": np.full(2, step, dtype=np.int64)}, {"step": step})
    latest = pool.pull_latest("main")
    assert latest.key == ModelKey("main", 3)
    assert latest.metadata["step"] == 2
    np.testing.assert_array_equal(latest.weights["w"], [2, 2])
    assert pool.latest_version("main") == 3


def test_list_is_sorted_and_filters_by_policy(pool: ModelPool) -> None:
    """The league enumerates snapshots; the order must be stable."""
    for policy in ["b", "a", "b", "c:1", "a"]:
        pool.push(policy, {"w": np.zeros(1)})
    assert pool.list() == [ModelKey("a", 1), ModelKey("a", 2), ModelKey("b", 1), ModelKey("b", 2), ModelKey("c:1", 1)]
    assert pool.list("b") == [ModelKey("b", 1), ModelKey("b", 2)]
    assert pool.list("unknown") == []
    assert pool.policies() == ["a", "b", "c:1"]


def test_pushed_arrays_are_copied(pool: ModelPool) -> None:
    """Neither the pusher nor a puller may change a stored snapshot by mutating arrays."""
    weights = {"w": np.zeros(3, dtype=np.float32)}
    key = pool.push("main", weights)
    weights["w"][:] = 7.0
    pulled = pool.pull(key).weights["w"]
    pulled[:] = 9.0
    np.testing.assert_array_equal(pool.pull(key).weights["w"], np.zeros(3, dtype=np.float32))


def test_rejected_push_uses_up_no_version(pool: ModelPool) -> None:
    """Bad input must not leave a gap in the version sequence."""
    with pytest.raises(TypeError):
        pool.push("main", {"w": [1, 2]})
    assert pool.push("main", {"w": np.zeros(1)}).version == 1
