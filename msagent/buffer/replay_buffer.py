"""A replay buffer: several named tables behind one object, each with its own lock.

Knows nothing of services: a service wrapper may call these methods from many threads at once
(one per remote caller); each table serializes its own calls and blocks on a condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from msagent.buffer.config import TableConfig
from msagent.buffer.records import SampledItem, TableStats
from msagent.buffer.table import Table
from msagent.errors import ConfigError


class ReplayBuffer:
    """Named tables (see ``TableConfig``) reached by name; the set of tables is fixed.

    Args:
        tables: One config per table; names must be unique.

    Each method taking ``table`` forwards to that ``Table`` (see its docstrings) and raises
    ``ConfigError`` for an unknown table name.
    """

    def __init__(self, tables: Sequence[TableConfig]) -> None:
        names = [config.name for config in tables]
        if not names:
            raise ConfigError("a ReplayBuffer needs at least one TableConfig")
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ConfigError(f"table names must be unique; repeated: {repeated}")
        self._tables = {config.name: Table(config) for config in tables}

    @property
    def table_names(self) -> list[str]:
        """Names of the tables, in the order they were configured."""
        return list(self._tables)

    def table(self, name: str) -> Table:
        """The table called ``name``.

        Raises:
            ConfigError: When no table has that name; the message lists the known ones.
        """
        try:
            return self._tables[name]
        except (KeyError, TypeError):
            raise ConfigError(
                f"unknown table {name!r}; known tables: {list(self._tables)}"
            ) from None

    def insert(
        self,
        table: str,
        items: Sequence[Any],
        priorities: Sequence[float] | None = None,
        timeout_s: float | None = None,
    ) -> list[int]:
        """Insert items into a table (blocking per its rate limiter); return their keys."""
        return self.table(table).insert(items, priorities, timeout_s)

    def sample(self, table: str, n: int, timeout_s: float | None = None) -> list[SampledItem]:
        """Draw n items from a table (blocking per its rate limiter)."""
        return self.table(table).sample(n, timeout_s)

    def update_priorities(
        self, table: str, keys: Sequence[int], priorities: Sequence[float]
    ) -> int:
        """Change priorities of items still in a table; return how many changed."""
        return self.table(table).update_priorities(keys, priorities)

    def await_room(self, table: str, limit: int, timeout_s: float) -> bool:
        """Wait until a table holds fewer than ``limit`` items; False on timeout."""
        return self.table(table).await_room(limit, timeout_s)

    def size(self, table: str) -> int:
        """Number of items a table holds now."""
        return self.table(table).size

    def stats(self, table: str) -> TableStats:
        """A snapshot of one table's counters."""
        return self.table(table).stats()

    def all_stats(self) -> dict[str, TableStats]:
        """Snapshots of every table's counters, by table name."""
        return {name: table.stats() for name, table in self._tables.items()}
