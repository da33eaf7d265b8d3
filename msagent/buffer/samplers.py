"""Samplers: which live keys a table hands out (uniform, prioritized, oldest or newest first).

A sampler only tracks keys (and priorities); the table owns the items, removes what samplers
return and holds the lock, so samplers are not thread-safe on their own. Draws within one call
are independent (with replacement): a FIFO sampler asked for 3 keys returns the oldest key 3
times, unless the table's ``max_times_sampled`` removes it in between (the table then draws one
at a time, as Reverb does).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from msagent.buffer.ordered_keys import OrderedKeys
from msagent.buffer.sumtree import SumTree
from msagent.errors import ConfigError


class Draw(NamedTuple):
    """Keys drawn by a sampler and the probability each had of being drawn."""

    keys: np.ndarray
    probabilities: np.ndarray


class Sampler(ABC):
    """Chooses keys among the live ones; told by the table of every add, remove and update."""

    @abstractmethod
    def __len__(self) -> int:
        """Number of live keys the sampler can draw from."""

    @abstractmethod
    def add(self, keys: Sequence[int], priorities: np.ndarray) -> None:
        """Make new keys drawable."""

    @abstractmethod
    def remove(self, keys: Sequence[int]) -> None:
        """Stop drawing keys that left the table."""

    @abstractmethod
    def sample(self, n: int) -> Draw:
        """Draw n keys with replacement from a non-empty set."""

    def update(self, keys: Sequence[int], priorities: np.ndarray) -> None:
        """Take new priorities into account (ignored by samplers that do not use them)."""

    def weights(self, probabilities: np.ndarray) -> np.ndarray:
        """Importance-sampling weights that correct for non-uniform draws (1 when uniform)."""
        return np.ones_like(probabilities, dtype=np.float64)


class UniformSampler(Sampler):
    """Every live key equally likely; keys sit in a dense array with swap-removal."""

    def __init__(self, capacity: int, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(seed)
        self._keys = np.zeros(capacity, dtype=np.int64)
        self._pos: dict[int, int] = {}

    def __len__(self) -> int:
        """Number of live keys."""
        return len(self._pos)

    def add(self, keys: Sequence[int], priorities: np.ndarray) -> None:
        """Append keys at the end of the dense array."""
        for key in keys:
            self._keys[len(self._pos)] = key
            self._pos[int(key)] = len(self._pos)

    def remove(self, keys: Sequence[int]) -> None:
        """Move the last key into each removed key's slot."""
        for key in keys:
            slot, last = self._pos.pop(int(key)), len(self._pos)
            if slot != last:
                moved = int(self._keys[last])
                self._keys[slot] = moved
                self._pos[moved] = slot

    def sample(self, n: int) -> Draw:
        """Draw n slots uniformly at random."""
        size = _require_keys(len(self._pos))
        slots = self._rng.integers(0, size, n)
        return Draw(self._keys[slots].copy(), np.full(n, 1.0 / size))


class PrioritizedSampler(Sampler):
    """Draws key i with probability p_i^alpha / sum_j p_j^alpha (Schaul et al., 2016).

    Args:
        capacity: Most keys held at once (the table's max_size).
        alpha: Priority exponent, >= 0 (0 is uniform).
        beta: Importance-sampling exponent in [0, 1]; None gives weights of 1.
        seed: Seed of the random generator.

    When every priority is 0 it draws uniformly rather than failing.
    """

    def __init__(
        self, capacity: int, alpha: float, beta: float | None = None, seed: int | None = None
    ) -> None:
        if alpha < 0:
            raise ConfigError(f"prioritized sampler: alpha must be >= 0, got {alpha}")
        if beta is not None and not 0 <= beta <= 1:
            raise ConfigError(f"prioritized sampler: beta must be in [0, 1], got {beta}")
        self.alpha, self.beta = float(alpha), beta
        self._rng = np.random.default_rng(seed)
        self._tree = SumTree(capacity)
        self._slot_of: dict[int, int] = {}
        self._key_at = np.zeros(capacity, dtype=np.int64)
        self._free = list(range(capacity - 1, -1, -1))

    def __len__(self) -> int:
        """Number of live keys."""
        return len(self._slot_of)

    def add(self, keys: Sequence[int], priorities: np.ndarray) -> None:
        """Give each key a free leaf and write its priority^alpha there."""
        slots = [self._free.pop() for _ in keys]
        for key, slot in zip(keys, slots):
            self._slot_of[int(key)] = slot
        self._key_at[slots] = keys
        self._tree.update(slots, np.power(priorities, self.alpha))

    def remove(self, keys: Sequence[int]) -> None:
        """Zero the keys' leaves and free them for later keys."""
        slots = [self._slot_of.pop(int(key)) for key in keys]
        self._tree.update(slots, np.zeros(len(slots)))
        self._free.extend(slots)

    def update(self, keys: Sequence[int], priorities: np.ndarray) -> None:
        """Rewrite the keys' leaves with new priority^alpha, as one batched tree update."""
        slots = [self._slot_of[int(key)] for key in keys]
        self._tree.update(slots, np.power(priorities, self.alpha))

    def sample(self, n: int) -> Draw:
        """Batched prefix-sum search on uniform points in [0, total)."""
        _require_keys(len(self._slot_of))
        total = self._tree.total
        if total <= 0:
            return self._sample_uniform(n)
        slots = self._tree.find(self._rng.uniform(0.0, total, n))
        return Draw(self._key_at[slots].copy(), self._tree.get(slots) / total)

    def weights(self, probabilities: np.ndarray) -> np.ndarray:
        """(N * P(i))^-beta over the batch's largest weight (N cancels); 1 when beta is None."""
        if self.beta is None or probabilities.size == 0:
            return super().weights(probabilities)
        raw = np.power(np.maximum(probabilities, 1e-300), -self.beta)
        return raw / raw.max()

    def _sample_uniform(self, n: int) -> Draw:
        """Fall back to uniform draws when every priority is zero."""
        slots = np.fromiter(self._slot_of.values(), dtype=np.int64)
        picked = self._rng.choice(slots, size=n)
        return Draw(self._key_at[picked].copy(), np.full(n, 1.0 / slots.size))


class FifoSampler(Sampler):
    """Always draws the oldest live key (a queue, with ``max_times_sampled=1``)."""

    def __init__(self) -> None:
        self._order = OrderedKeys()

    def __len__(self) -> int:
        """Number of live keys."""
        return len(self._order)

    def add(self, keys: Sequence[int], priorities: np.ndarray) -> None:
        """Append keys as the newest."""
        self._order.add(keys)

    def remove(self, keys: Sequence[int]) -> None:
        """Forget keys."""
        self._order.discard(keys)

    def sample(self, n: int) -> Draw:
        """Return the oldest key n times, with probability 1."""
        _require_keys(len(self._order))
        return Draw(np.full(n, self._pick(), dtype=np.int64), np.ones(n))

    def _pick(self) -> int:
        """The key this sampler serves first."""
        return self._order.oldest()


class LifoSampler(FifoSampler):
    """Always draws the newest live key (a stack, with ``max_times_sampled=1``)."""

    def _pick(self) -> int:
        """The key this sampler serves first."""
        return self._order.newest()


def _require_keys(size: int) -> int:
    """Refuse to draw from an empty sampler (the table's rate limiter should prevent it)."""
    if size == 0:
        raise LookupError("cannot sample from an empty table")
    return size


_BUILDERS: dict[str, Callable[..., Sampler]] = {
    "uniform": lambda capacity, seed: UniformSampler(capacity, seed),
    "prioritized": lambda capacity, seed, **kw: PrioritizedSampler(capacity, seed=seed, **kw),
    "fifo": lambda capacity, seed: FifoSampler(),
    "lifo": lambda capacity, seed: LifoSampler(),
}

SAMPLER_KINDS = tuple(_BUILDERS)
"""Names accepted as ``TableConfig.sampler``."""


def make_sampler(
    kind: str, capacity: int, seed: int | None = None, params: Mapping[str, Any] | None = None
) -> Sampler:
    """Build a sampler from its config name, so configs stay plain data."""
    if kind not in _BUILDERS:
        raise ConfigError(f"unknown sampler kind {kind!r}; known kinds: {list(SAMPLER_KINDS)}")
    try:
        return _BUILDERS[kind](capacity, seed, **dict(params or {}))
    except TypeError as exc:
        bad = dict(params or {})
        raise ConfigError(f"sampler {kind!r}: bad sampler_params {bad}: {exc}") from exc
