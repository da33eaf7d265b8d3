"""SumTree: totals, batched updates and batched prefix-sum search."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.buffer import SumTree


def _filled(values: list[float] | np.ndarray) -> SumTree:
    """A tree whose leaves hold the given values."""
    tree = SumTree(len(values))
    tree.update(np.arange(len(values)), values)
    return tree


@pytest.mark.parametrize("capacity", [1, 2, 7, 13, 64, 1000])
def test_find_matches_searchsorted_on_cumsum(capacity: int) -> None:
    rng = np.random.default_rng(capacity)
    values = rng.uniform(0, 5, capacity) * (rng.uniform(size=capacity) > 0.3)
    values[0] = max(values[0], 0.5)
    tree = _filled(values)
    queries = rng.uniform(0, values.sum(), 2000)
    expected = np.searchsorted(np.cumsum(values), queries, side="right")
    np.testing.assert_array_equal(tree.find(queries), expected)
    assert tree.total == pytest.approx(values.sum())


def test_exact_prefix_boundaries() -> None:
    tree = _filled([1.0, 2.0, 0.0, 3.0])
    found = tree.find([0.0, 0.999, 1.0, 2.999, 3.0, 5.999])
    np.testing.assert_array_equal(found, [0, 0, 1, 1, 3, 3])


def test_query_at_or_past_total_lands_on_last_positive_leaf() -> None:
    tree = _filled([1.0, 2.0, 3.0, 0.0, 0.0])
    np.testing.assert_array_equal(tree.find([6.0, 100.0]), [2, 2])


def test_zero_leaves_are_never_found() -> None:
    values = np.array([0.0, 1e-9, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    tree = _filled(values)
    found = tree.find(np.linspace(0, tree.total, 10_001))
    assert set(found.tolist()) <= {1, 4}


def test_batched_update_recomputes_totals_and_last_write_wins() -> None:
    tree = _filled([1.0] * 10)
    tree.update([3, 7, 3], [5.0, 0.0, 2.0])
    np.testing.assert_array_equal(tree.get([3, 7]), [2.0, 0.0])
    assert tree.total == pytest.approx(10 - 1 - 1 + 2)
    assert 7 not in tree.find(np.linspace(0, tree.total, 1000)).tolist()


def test_rejects_negative_values_and_bad_indices() -> None:
    tree = SumTree(4)
    with pytest.raises(ValueError, match=">= 0"):
        tree.update([0], [-1.0])
    with pytest.raises(IndexError):
        tree.update([4], [1.0])
    with pytest.raises(ValueError):
        tree.update([0, 1], [1.0])
    assert tree.total == 0.0
