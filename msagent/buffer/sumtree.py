"""A numpy sum-tree: batched leaf updates and batched prefix-sum search in O(log n) each."""

from __future__ import annotations

import numpy as np


class SumTree:
    """Fixed-capacity binary tree whose inner nodes hold the sum of their children.

    Leaves live at ``[size, 2 * size)`` of one flat array, the root at index 1; ``size`` is the
    capacity rounded up to a power of two so that every leaf has the same depth, which lets a
    whole batch of updates or searches walk the tree level by level with numpy.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"SumTree capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self._depth = max(0, (self.capacity - 1).bit_length())
        self._size = 1 << self._depth
        self._tree = np.zeros(2 * self._size, dtype=np.float64)

    @property
    def total(self) -> float:
        """Sum of all leaves, the mass that a prefix search spreads over."""
        return float(self._tree[1])

    def get(self, indices: np.ndarray | list[int]) -> np.ndarray:
        """Read leaf values, to report the weight each sampled leaf had."""
        return self._tree[self._size + self._check(indices)].copy()

    def update(self, indices: np.ndarray | list[int], values: np.ndarray | list[float]) -> None:
        """Set leaves (last write wins on repeated indices) and recompute their ancestors."""
        idx = self._check(indices)
        vals = np.asarray(values, dtype=np.float64).reshape(-1)
        if idx.shape != vals.shape:
            raise ValueError(f"{idx.size} indices but {vals.size} values")
        if np.any(vals < 0) or not np.all(np.isfinite(vals)):
            raise ValueError("SumTree values must be finite and >= 0")
        last = idx.size - 1 - np.unique(idx[::-1], return_index=True)[1]
        self._tree[self._size + idx[last]] = vals[last]
        self._refresh(self._size + idx[last])

    def find(self, values: np.ndarray | list[float]) -> np.ndarray:
        """Return, for each value v, the leaf i with prefix(i) <= v < prefix(i + 1).

        Values at or past the total land on the last leaf with positive weight, and the search
        never ends on a zero leaf while the total is positive (it steps around empty subtrees
        that float rounding could otherwise make it enter).
        """
        rest = np.asarray(values, dtype=np.float64).reshape(-1).copy()
        node = np.ones(rest.shape, dtype=np.int64)
        for _ in range(self._depth):
            left = 2 * node
            left_sum = self._tree[left]
            right = (rest >= left_sum) & (self._tree[left + 1] > 0)
            rest = np.where(right, rest - left_sum, rest)
            node = np.where(right, left + 1, left)
        return node - self._size

    def _refresh(self, nodes: np.ndarray) -> None:
        """Recompute inner sums above the given leaves, one tree level per numpy step."""
        for _ in range(self._depth):
            nodes = np.unique(nodes // 2)
            self._tree[nodes] = self._tree[2 * nodes] + self._tree[2 * nodes + 1]

    def _check(self, indices: np.ndarray | list[int]) -> np.ndarray:
        """Return indices as an int array, refusing any outside the capacity."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.capacity):
            raise IndexError(f"SumTree leaf index out of range [0, {self.capacity})")
        return idx
