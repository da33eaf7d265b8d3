"""Plain values a table hands back: sampled items and table statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SampledItem:
    """One draw from a table.

    Attributes:
        key: The item's key in its table (ints that only grow).
        item: The stored value, e.g. a ``Fragment``.
        priority: The item's priority when drawn (1.0 unless given).
        times_sampled: How many times the item has been drawn, this draw included.
        probability: The probability this draw had of picking this item.
        weight: Importance-sampling weight (1.0 unless a prioritized sampler has a beta).
    """

    key: int
    item: Any
    priority: float
    times_sampled: int
    probability: float
    weight: float = 1.0


@dataclass
class TableStats:
    """Counters of one table since it was created (a copy is returned by ``Table.stats``).

    Attributes:
        name: The table's name.
        max_size: The table's capacity.
        size: Items held now.
        inserts: Items inserted.
        samples: Items drawn (a draw of n counts n).
        evictions: Items the remover evicted to make room.
        removed_by_max_times_sampled: Items removed because they reached max_times_sampled.
        priority_updates: Priorities changed by ``update_priorities`` (unknown keys excluded).
        blocked_inserts: Insert calls that had to wait for the rate limiter.
        blocked_samples: Sample calls that had to wait for the rate limiter.
        insert_wait_s: Total seconds insert calls waited.
        sample_wait_s: Total seconds sample calls waited.
        insert_timeouts: Insert calls that raised RateLimitTimeout.
        sample_timeouts: Sample calls that raised RateLimitTimeout.
    """

    name: str
    max_size: int
    size: int = 0
    inserts: int = 0
    samples: int = 0
    evictions: int = 0
    removed_by_max_times_sampled: int = 0
    priority_updates: int = 0
    blocked_inserts: int = 0
    blocked_samples: int = 0
    insert_wait_s: float = 0.0
    sample_wait_s: float = 0.0
    insert_timeouts: int = 0
    sample_timeouts: int = 0
