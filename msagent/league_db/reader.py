"""Reading a run's league database without writing to it: its figures for ``msagent
league`` and ad-hoc SQL (``msagent league RUN_DIR --sql ...``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, func, select, text

from msagent.league_db import schema
from msagent.league_db.engine import DATABASE_NAME, make_engine

MAX_ROWS = 10_000
"""Most rows a query hands back (a bigger answer: use sqlite3 or psql directly)."""


def reader_engine(url: str, run_dir: str | Path) -> Engine:
    """A read-only engine: ``url``, else the run's own ``league.db`` (which must exist)."""
    if url:
        return make_engine(url)
    path = Path(run_dir) / DATABASE_NAME
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist (a run from before the league "
                                "database: its next --resume writes it)")
    return create_engine(f"sqlite:///file:{path.resolve()}?mode=ro&uri=true")


def query(engine: Engine, sql: str, limit: int = MAX_ROWS) -> tuple[list[str], list[tuple]]:
    """The columns and (at most ``limit``) rows of one SQL statement, in a transaction that
    may not write (SQLite opened read-only; PostgreSQL's ``READ ONLY`` transaction)."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        result = conn.execute(text(sql))
        if not result.returns_rows:
            return [], []
        return list(result.keys()), [tuple(r) for r in result.fetchmany(limit)]


def newest_matches(engine: Engine, run_id: str, count: int) -> list[dict[str, Any]]:
    """The run's newest ``count`` results, newest first (by the primary key: no scan)."""
    m = schema.matches
    query = select(m.c.time, m.c.seats, m.c.learner_seat, m.c.outcome, m.c.length,
                   m.c.version, m.c.generation, m.c.seq).where(m.c.run_id == run_id).order_by(
        m.c.id.desc()).limit(count)
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def history(engine: Engine, run_id: str) -> dict[str, Any]:
    """How much history a run has: results, generations, snapshots, the first and newest
    result's time (by the primary key's ends: no scan of a million rows)."""
    m, g, snap = schema.matches, schema.generations, schema.snapshots
    ends = [select(m.c.time).where(m.c.run_id == run_id).order_by(order).limit(1)
            for order in (m.c.id.asc(), m.c.id.desc())]
    with engine.connect() as conn:
        count = conn.execute(select(func.count()).select_from(m).where(
            m.c.run_id == run_id)).scalar_one()
        first, last = (conn.execute(q).scalar() for q in ends)
        generations = conn.execute(select(func.count()).select_from(g).where(
            g.c.run_id == run_id)).scalar_one()
        snapshots = conn.execute(select(func.count()).select_from(snap).where(
            snap.c.run_id == run_id)).scalar_one()
    return {"matches": int(count), "first": first, "last": last,
            "generations": int(generations), "snapshots": int(snapshots)}
