"""The replay buffer as a service: a thin wrapper around ``msagent.buffer.ReplayBuffer``."""

from __future__ import annotations

import dataclasses
from typing import Any

from msagent.buffer import ReplayBuffer, SampledItem, TableConfig
from msagent.runtime import call, register


class ReplayBufferService:
    """Tables of fragments; inserts are fire-and-forget, samples block under the rate limiter.

    Every method is ``concurrent``: the tables are thread-safe and their rate limiters block
    callers on a condition, which must not hold the instance lock.
    """

    def __init__(self, tables: list[TableConfig]) -> None:
        self.buffer = ReplayBuffer(tables)

    @register(response=False, concurrent=True)
    def insert(self, table: str, items: list[Any], timeout_s: float | None = None) -> None:
        """Add items (nobody waits; a failure is logged here)."""
        self.buffer.insert(table, items, timeout_s=timeout_s)

    @register(concurrent=True)
    def insert_wait(self, table: str, items: list[Any], timeout_s: float | None = None,
                    priorities: list[float] | None = None) -> list[int]:
        """Add items and return their keys (for callers that need back-pressure or keys)."""
        return self.buffer.insert(table, items, priorities=priorities, timeout_s=timeout_s)

    @register(concurrent=True)
    def sample(self, table: str, n: int, timeout_s: float | None = None) -> list[SampledItem]:
        """Draw ``n`` items; raises RateLimitTimeout if the limiter holds them past the timeout."""
        return self.buffer.sample(table, n, timeout_s=timeout_s)

    @register(concurrent=True)
    def update_priorities(self, table: str, keys: list[int], priorities: list[float]) -> int:
        """Set new priorities for sampled keys (prioritized tables)."""
        return self.buffer.update_priorities(table, keys, priorities)

    @register(concurrent=True)
    def await_room(self, table: str, limit: int, timeout_s: float) -> bool:
        """Wait until a table holds fewer than ``limit`` items (async env workers' back-pressure);
        False on timeout."""
        return self.buffer.await_room(table, limit, timeout_s)

    @register(concurrent=True)
    def stats(self, table: str) -> dict[str, Any]:
        """Counters of one table, as a plain dict."""
        return {"size": self.buffer.size(table), **dataclasses.asdict(self.buffer.stats(table))}


class BufferClient:
    """The calls other services make to ``ReplayBufferService``, typed."""

    @staticmethod
    def insert(table: str, items: list[Any]) -> None:
        """Add items to a table without waiting (the buffer holds them while its rate limiter
        says the table is full: a table with a ratio is shipped to with ``insert_wait``)."""
        call(ReplayBufferService.insert, table, items)

    @staticmethod
    def insert_wait(table: str, items: list[Any], timeout_s: float | None = None) -> list[int]:
        """Add items, waiting (in the caller) while the table's rate limiter holds them; their
        keys (RateLimitTimeout past ``timeout_s``)."""
        return call(ReplayBufferService.insert_wait, table, items, timeout_s)

    @staticmethod
    def await_room(table: str, limit: int, timeout_s: float) -> bool:
        """Whether the table holds fewer than ``limit`` items within ``timeout_s``."""
        return call(ReplayBufferService.await_room, table, limit, timeout_s)

    @staticmethod
    def sample(table: str, n: int, timeout_s: float | None = None) -> list[SampledItem]:
        """Up to ``n`` items of a table (RateLimitTimeout if none came within ``timeout_s``)."""
        return call(ReplayBufferService.sample, table, n, timeout_s)

    @staticmethod
    def size(table: str) -> int:
        """Items the table holds now."""
        return call(ReplayBufferService.stats, table)["size"]
