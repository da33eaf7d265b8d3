"""``LeagueDatabase``: one run's league history in SQLite or PostgreSQL, written as it happens.

Each call is one transaction, so whatever a call returned from is on disk (SQLite's WAL) or
in the server: the league service writes a batch of results before it acknowledges it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import JSON, Connection, Dialect, Table, func, select

from msagent.league_db import schema
from msagent.league_db.engine import make_engine, migrate


class LeagueDatabase:
    """One run's rows (``run_id``) in the database at ``url``, migrated to the newest schema
    unless ``migrate_schema`` is False (a reader)."""

    def __init__(self, url: str, run_id: str, migrate_schema: bool = True) -> None:
        self.run_id = run_id
        self.engine = make_engine(url)
        if migrate_schema:
            migrate(self.engine)
        self._writer: Connection | None = None
        self._inserts = {t.name: DriverInsert(t, self.engine.dialect)
                         for t in (schema.matches, schema.ratings)}

    def start(self, name: str, config: str, generation: int, resumed_step: int | None,
              reported: int) -> None:
        """Record the run (once) and this start of it (generation 0, or a resume)."""
        now = time.time()
        with self.engine.begin() as conn:
            _upsert(conn, schema.runs, [{"run_id": self.run_id, "name": name,
                                         "created_at": now, "config": config,
                                         "generation": generation}],
                    ("run_id",), ("generation",))
            _upsert(conn, schema.generations, [self._row(
                generation=generation, started_at=now, resumed_step=resumed_step,
                reported=reported)], ("run_id", "generation"))

    def record_players(self, rows: Sequence[dict[str, Any]]) -> None:
        """Insert or update trainable players."""
        with self.engine.begin() as conn:
            _upsert(conn, schema.players, [self._row(**r) for r in rows],
                    ("run_id", "player_id"))

    def record_snapshot(self, snapshot: dict[str, Any], player: dict[str, Any] | None) -> None:
        """A new snapshot and its player's new parent (and resets), together (``player``
        None: its owner is not a player of this run)."""
        with self.engine.begin() as conn:
            _upsert(conn, schema.snapshots, [self._row(**snapshot)], ("run_id", "participant"))
            if player is not None:
                _upsert(conn, schema.players, [self._row(**player)], ("run_id", "player_id"))

    def record_results(self, matches: Sequence[dict[str, Any]],
                       ratings: Sequence[dict[str, Any]]) -> None:
        """A batch of accepted results and the ratings they moved, in one transaction."""
        if not matches and not ratings:
            return
        if self._writer is None:  # kept open: a checkout per call costs more than the insert
            self._writer = self.engine.connect()
        raw = self._writer.connection.dbapi_connection
        assert raw is not None
        cursor = raw.cursor()
        try:  # the driver's own transaction: SQLAlchemy's per call cost as much as the insert
            for table, rows in (("matches", matches), ("ratings", ratings)):
                if rows:
                    insert = self._inserts[table]
                    cursor.executemany(insert.sql, insert.params(self.run_id, rows))
            raw.commit()
        except BaseException:
            raw.rollback()
            raise
        finally:
            cursor.close()

    def insert(self, table: Table, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows of this run (off the hot path: evaluations, measures, exploits)."""
        if rows:
            with self.engine.begin() as conn:
                conn.execute(table.insert(), [self._row(**r) for r in rows])

    def upsert(self, table: Table, rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> None:
        """Insert rows of this run, replacing those with the same ``keys`` (run_id added)."""
        if rows:
            with self.engine.begin() as conn:
                _upsert(conn, table, [self._row(**r) for r in rows], ("run_id", *keys))

    def mark_deleted(self, participants: Sequence[str]) -> None:
        """Mark snapshots whose weights retention deleted (their rows stay)."""
        if participants:
            table = schema.snapshots
            with self.engine.begin() as conn:
                conn.execute(table.update().where(
                    table.c.run_id == self.run_id, table.c.participant.in_(list(participants))
                ).values(weights_deleted=True))

    def count(self, table: Table) -> int:
        """How many rows of this run ``table`` holds."""
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(table).where(
                table.c.run_id == self.run_id)).scalar_one())

    def rows(self, table: Table, order_by: str | None = None) -> list[dict[str, Any]]:
        """Every row of this run in ``table`` (for readers and tests; mind the size)."""
        query = select(table).where(table.c.run_id == self.run_id)
        if order_by:
            query = query.order_by(table.c[order_by])
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def close(self) -> None:
        """Release the connections."""
        if self._writer is not None:
            self._writer.close()
        self.engine.dispose()

    def _row(self, **values: Any) -> dict[str, Any]:
        """``values`` with this run's id."""
        return {"run_id": self.run_id, **values}


class DriverInsert:
    """A table's INSERT in the driver's own SQL, compiled once: the league writes results on
    its hot path, where building the statement per call cost twice the insert itself."""

    def __init__(self, table: Table, dialect: Dialect) -> None:
        columns = [c.name for c in table.columns if not c.primary_key]
        compiled = table.insert().compile(dialect=dialect, column_keys=columns)
        self.sql = str(compiled)
        self.order = list(compiled.positiontup or []) if compiled.positional else None
        self.json = {c.name for c in table.columns if isinstance(c.type, JSON)}

    def params(self, run_id: str, rows: Sequence[dict[str, Any]]) -> list[Any]:
        """The driver's parameters for ``rows`` (JSON columns as JSON text)."""
        out = []
        for row in rows:
            values = {k: json.dumps(v) if k in self.json else v for k, v in row.items()}
            values["run_id"] = run_id
            out.append(tuple(values[k] for k in self.order) if self.order is not None
                       else values)
        return out


def _upsert(conn: Connection, table: Table, rows: list[dict[str, Any]], keys: Sequence[str],
            update: Sequence[str] | None = None) -> None:
    """Insert ``rows``, updating ``update`` (default: every non-key column) on a key clash:
    SQLite and PostgreSQL share the ``ON CONFLICT`` form, each through its own dialect."""
    if not rows:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(table)
    columns = update if update is not None else [c for c in rows[0] if c not in keys]
    conn.execute(statement.on_conflict_do_update(
        index_elements=list(keys), set_={c: statement.excluded[c] for c in columns}), rows)
