"""Mistakes are refused with errors that say what went wrong."""

from __future__ import annotations

import numpy as np
import pytest
from pool_samples import StoreFactory

from msagent.errors import MsagentError
from msagent.model_pool import (
    InvalidMetadataError,
    InvalidPolicyIdError,
    InvalidWeightsError,
    ModelPool,
    SnapshotNotFoundError,
)
from msagent.vocabulary import ModelKey


@pytest.fixture
def pool(new_store: StoreFactory) -> ModelPool:
    """A pool that keeps three snapshots per policy."""
    return ModelPool(new_store(), keep_last=3)


def test_missing_version_names_policy_version_and_what_exists(pool: ModelPool) -> None:
    """The error must say what was asked and what could be asked instead."""
    for _ in range(6):
        pool.push("main", {"w": np.zeros(1)})
    with pytest.raises(SnapshotNotFoundError) as info:
        pool.pull(ModelKey("main", 2))
    error = info.value
    assert isinstance(error, KeyError) and isinstance(error, MsagentError)
    assert str(error) == (
        "no snapshot main:2 in the model pool: policy 'main' has versions [4-6] (older ones may have been pruned)"
    )
    assert (error.policy_id, error.version, error.available) == ("main", 2, [4, 5, 6])


def test_unknown_policy_says_it_has_no_snapshots(pool: ModelPool) -> None:
    """Asking for a policy that was never pushed must say so plainly."""
    with pytest.raises(SnapshotNotFoundError, match="policy 'ghost' has no snapshots"):
        pool.pull(ModelKey("ghost", 1))
    with pytest.raises(SnapshotNotFoundError, match="no latest snapshot of policy 'ghost'.*has no snapshots"):
        pool.pull_latest("ghost")


def test_non_array_weights_name_the_bad_entry(pool: ModelPool) -> None:
    """A tensor or list among the weights must be named and nothing stored."""
    with pytest.raises(InvalidWeightsError, match=r"weights\['fc.bias'\] is a builtins.list"):
        pool.push("main", {"fc.weight": np.zeros(2), "fc.bias": [0.0, 1.0]})
    assert pool.list() == []


@pytest.mark.parametrize("policy_id", ["", None, 3])
def test_bad_policy_ids_are_refused(pool: ModelPool, policy_id: object) -> None:
    """An empty or non-str policy id would make keys ambiguous."""
    with pytest.raises(InvalidPolicyIdError, match="non-empty str"):
        pool.push(policy_id, {"w": np.zeros(1)})  # type: ignore[arg-type]
    with pytest.raises(InvalidPolicyIdError):
        pool.pull_latest(policy_id)  # type: ignore[arg-type]


def test_non_bool_frozen_and_non_plain_metadata_are_refused(pool: ModelPool) -> None:
    """Bad metadata must be refused before a version is used up."""
    with pytest.raises(InvalidMetadataError, match="frozen"):
        pool.push("main", {"w": np.zeros(1)}, {"frozen": "yes"})
    with pytest.raises(InvalidMetadataError, match="plain values"):
        pool.push("main", {"w": np.zeros(1)}, {"optimizer": object()})
    assert pool.latest_version("main") is None


def test_pull_wants_a_model_key(pool: ModelPool) -> None:
    """A tuple is not a key; saying so beats a confusing lookup failure."""
    pool.push("main", {"w": np.zeros(1)})
    with pytest.raises(TypeError, match="ModelKey"):
        pool.pull(("main", 1))  # type: ignore[arg-type]
