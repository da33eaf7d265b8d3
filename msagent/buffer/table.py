"""A Reverb-like table: items with keys and priorities, a sampler, a remover, a rate limiter.

Thread-safe: every public method holds the table's lock (the rate limiter's re-entrant
condition) and blocking waits on that condition, which releases the lock while waiting.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from msagent.buffer.config import TableConfig
from msagent.buffer.rate_limiter import RateLimiter
from msagent.buffer.records import SampledItem, TableStats
from msagent.buffer.removers import make_remover
from msagent.buffer.samplers import make_sampler
from msagent.buffer.validation import (
    check_count,
    check_items,
    check_keys,
    check_priorities,
    check_timeout,
)
from msagent.errors import RateLimitTimeout

__all__ = ["Table", "TableConfig"]

_Row = tuple[int, Any, float, int]
"""(key, item, priority, times_sampled) of one draw, before its weight is known."""


@dataclass
class _Entry:
    """What the table keeps per key."""

    item: Any
    priority: float
    times_sampled: int = 0


class Table:
    """Stores items under growing int keys; samples, evicts and rate-limits them."""

    def __init__(self, config: TableConfig) -> None:
        self.config = config
        self.name = config.name
        self._limiter = RateLimiter.from_config(config.rate_limiter, config.name)
        self._lock = self._limiter.condition
        self._sampler = make_sampler(
            config.sampler, config.max_size, config.seed, config.sampler_params
        )
        self._remover = make_remover(config.remover)
        self._entries: dict[int, _Entry] = {}
        self._next_key = 0
        self._budget = 0  # draws left before max_times_sampled empties the table
        self._stats = TableStats(config.name, config.max_size)

    @property
    def size(self) -> int:
        """Number of items held now."""
        with self._lock:
            return len(self._entries)

    def __len__(self) -> int:
        """Number of items held now."""
        return self.size

    def keys(self) -> list[int]:
        """Keys of the items held now, oldest first (for inspection and tests)."""
        with self._lock:
            return sorted(self._entries)

    def insert(
        self,
        items: Sequence[Any],
        priorities: Sequence[float] | None = None,
        timeout_s: float | None = None,
    ) -> list[int]:
        """Add items (waiting for the rate limiter between them) and return their keys.

        Items are committed one by one as the limiter allows, as in Reverb; a full table
        evicts the remover's choice for each new item.

        Args:
            items: The values to store, e.g. a list of ``Fragment``.
            priorities: One finite priority >= 0 per item; 1.0 each when None.
            timeout_s: Longest total wait for the rate limiter; None waits forever.

        Returns:
            The new keys, in the order of ``items``.

        Raises:
            TypeError, ValueError: On bad arguments, before anything is inserted.
            RateLimitTimeout: When the wait runs past ``timeout_s``; its ``inserted_keys``
                lists the items inserted before it, which stay in the table.
        """
        items = check_items(items)
        prios = check_priorities(priorities, len(items))
        deadline = _deadline(check_timeout(timeout_s))
        keys: list[int] = []
        with self._lock:
            while len(keys) < len(items):
                self._await_insert(deadline, keys, len(items))
                done = len(keys)
                keys += self._insert_ready(items[done:], prios[done:])
        return keys

    def sample(self, n: int, timeout_s: float | None = None) -> list[SampledItem]:
        """Draw n items at once, waiting until the rate limiter grants all n.

        Draws are independent (with replacement) unless ``max_times_sampled`` removes an item
        in between; all-or-nothing, so a timeout takes nothing from the table.

        Args:
            n: Number of draws, > 0.
            timeout_s: Longest wait for the rate limiter; None waits forever.

        Returns:
            n ``SampledItem`` in draw order.

        Raises:
            TypeError, ValueError: On a bad n, or one no wait could ever grant.
            RateLimitTimeout: When the wait runs past ``timeout_s``.
        """
        n = check_count(n)
        deadline = _deadline(check_timeout(timeout_s))
        self._check_reachable(n)
        with self._lock:
            self._await_sample(n, deadline)
            rows, probabilities = self._draw(n)
            weights = self._sampler.weights(probabilities)
            self._stats.samples += n
            self._limiter.record_sample(n)
        return [
            SampledItem(*row, float(p), float(w))
            for row, p, w in zip(rows, probabilities, weights)
        ]

    def await_room(self, limit: int, timeout_s: float) -> bool:
        """Wait until the table holds fewer than ``limit`` items: back-pressure for producers
        that must not outrun the consumer (nothing is reserved). False on timeout."""
        try:
            self._limiter.wait("room", 0, lambda: len(self._entries) < limit, timeout_s, "")
        except RateLimitTimeout:
            return False
        return True

    def update_priorities(self, keys: Sequence[int], priorities: Sequence[float]) -> int:
        """Change priorities of live keys, e.g. to new TD errors after a learner step.

        Args:
            keys: Keys from ``insert`` or ``sample``; keys no longer held are skipped.
            priorities: One finite priority >= 0 per key (the last wins on repeated keys).

        Returns:
            How many priorities changed.
        """
        keys = check_keys(keys)
        prios = check_priorities(priorities, len(keys))
        with self._lock:
            live = [i for i, key in enumerate(keys) if key in self._entries]
            for i in live:
                self._entries[keys[i]].priority = float(prios[i])
            self._sampler.update([keys[i] for i in live], prios[live])
            self._stats.priority_updates += len(live)
        return len(live)

    def stats(self) -> TableStats:
        """A snapshot of the table's counters."""
        with self._lock:
            return replace(self._stats, size=len(self._entries))

    def rate_limiter_state(self) -> str:
        """The rate limiter's counts and band, for logs."""
        return self._limiter.describe()

    # --- insert ---------------------------------------------------------------------------

    def _await_insert(self, deadline: float | None, keys: list[int], total: int) -> None:
        """Wait until one more insert is allowed; on timeout report the keys already in."""
        detail = f" after {len(keys)} of {total} items were inserted" if keys else ""
        try:
            waited = self._limiter.await_insert(1, _left(deadline), detail)
        except RateLimitTimeout as exc:
            self._stats.insert_timeouts += 1
            exc.inserted_keys = list(keys)  # type: ignore[attr-defined]
            raise
        self._stats.blocked_inserts += waited > 0
        self._stats.insert_wait_s += waited

    def _insert_ready(self, items: list[Any], prios: np.ndarray) -> list[int]:
        """Insert items while the limiter allows, then tell the sampler in one batch."""
        added: dict[int, float] = {}
        gone: list[int] = []
        keys: list[int] = []
        for item, prio in zip(items, prios):
            if keys and not self._limiter.can_insert(1):
                break
            if len(self._entries) >= self.config.max_size:
                self._evict(added, gone)
            keys.append(self._add(item, float(prio)))
            added[keys[-1]] = float(prio)
        self._sampler.remove(gone)
        self._sampler.add(list(added), np.fromiter(added.values(), np.float64, len(added)))
        return keys

    def _add(self, item: Any, priority: float) -> int:
        """Store one item under the next key (the sampler is told later, in a batch)."""
        key, self._next_key = self._next_key, self._next_key + 1
        self._entries[key] = _Entry(item, priority)
        self._remover.add([key])
        self._budget += self.config.max_times_sampled
        self._stats.inserts += 1
        self._limiter.record_insert(1)
        return key

    def _evict(self, added: dict[int, float], gone: list[int]) -> None:
        """Drop the remover's choice; the sampler only hears of keys it already holds."""
        key = self._remover.select()
        self._drop(key)
        self._stats.evictions += 1
        if key in added:
            del added[key]
        else:
            gone.append(key)

    def _drop(self, key: int) -> None:
        """Remove one item from the entries, the remover and the limiter's size."""
        entry = self._entries.pop(key)
        self._remover.remove([key])
        if self.config.max_times_sampled:
            self._budget -= self.config.max_times_sampled - entry.times_sampled
        self._limiter.record_delete(1)

    # --- sample ---------------------------------------------------------------------------

    def _check_reachable(self, n: int) -> None:
        """Refuse a sample size that no amount of waiting could ever grant."""
        limit = self._limiter.max_sample_batch()
        if n > limit:
            raise ValueError(
                f"table {self.name!r}: a sample of {n} can never be granted: its rate limiter"
                f" lets samples run at most {limit:g} ahead; sample fewer or widen error_buffer"
            )
        cap = self.config.max_size * self.config.max_times_sampled
        if cap and n > cap:
            raise ValueError(
                f"table {self.name!r}: a sample of {n} can never be granted: it holds at most"
                f" {self.config.max_size} items, each sampled at most"
                f" {self.config.max_times_sampled} time(s)"
            )

    def _await_sample(self, n: int, deadline: float | None) -> None:
        """Wait until the limiter grants n draws and enough draws are left in the table."""
        also = (lambda: self._budget >= n) if self.config.max_times_sampled else None
        try:
            waited = self._limiter.await_sample(n, _left(deadline), also)
        except RateLimitTimeout as exc:
            self._stats.sample_timeouts += 1
            if self.config.max_times_sampled:
                raise RateLimitTimeout(f"{exc}; {self._budget} draw(s) left") from None
            raise
        self._stats.blocked_samples += waited > 0
        self._stats.sample_wait_s += waited

    def _draw(self, n: int) -> tuple[list[_Row], np.ndarray]:
        """Draw n rows: in one batch, or one by one when draws can remove items."""
        if not self.config.max_times_sampled:
            draw = self._sampler.sample(n)
            return [self._take(int(key)) for key in draw.keys], draw.probabilities
        rows, probabilities = [], np.empty(n, dtype=np.float64)
        for i in range(n):
            draw = self._sampler.sample(1)
            rows.append(self._take(int(draw.keys[0])))
            probabilities[i] = draw.probabilities[0]
        return rows, probabilities

    def _take(self, key: int) -> _Row:
        """Count one draw of key and remove it if it reached max_times_sampled."""
        entry = self._entries[key]
        entry.times_sampled += 1
        row = (key, entry.item, entry.priority, entry.times_sampled)
        limit = self.config.max_times_sampled
        if limit:
            self._budget -= 1
            if entry.times_sampled >= limit:
                self._drop(key)
                self._sampler.remove([key])
                self._stats.removed_by_max_times_sampled += 1
        return row


def _deadline(timeout_s: float | None) -> float | None:
    """Monotonic time at which a call gives up (None: never)."""
    return None if timeout_s is None else time.monotonic() + timeout_s


def _left(deadline: float | None) -> float | None:
    """Seconds left until the deadline, never negative (None: wait forever)."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())
