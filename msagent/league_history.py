"""A run directory's league database, for readers (``msagent league``, the dashboard): the
URL its saved config names, else its own ``league.db``, opened read-only."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from msagent.config.league_database import LeagueDatabaseSection
from msagent.errors import UserError
from msagent.league_db import DATABASE_NAME, LeagueDatabase, database_url, schema
from msagent.league_db.reader import reader_engine
from msagent.league_db.rows import exploit_row
from msagent.rundir import RunDir


def run_database(run_dir: str | Path) -> tuple[Engine, str]:
    """A read-only engine on the run's league database, and the run's id in it.

    Raises:
        UserError: the run has no league database (or its URL's variable is not set).
    """
    run = RunDir(Path(run_dir))
    try:
        return reader_engine(_section(run).resolved_url(), run.path), run.run_id
    except FileNotFoundError as exc:
        raise UserError(f"{run.path} has no league database: {exc}") from exc


def record_exploit(run_dir: str | Path, record: dict[str, Any]) -> bool:
    """Keep an exploit's record in the run's league database; False where the run has none
    (a run from before the database, or one with it switched off)."""
    run = RunDir(Path(run_dir))
    section = _section(run)
    url = section.resolved_url()
    if not section.enabled or not (url or (run.path / DATABASE_NAME).exists()):
        return False
    db = LeagueDatabase(database_url(url, run.path), run.run_id)
    try:
        if db.count(schema.runs) == 0:
            return False
        db.insert(schema.exploits, [exploit_row(record)])
        return True
    finally:
        db.close()


def _section(run: RunDir) -> LeagueDatabaseSection:
    """The run's saved ``[league.database]`` (the defaults where it has none)."""
    if not run.config_path.exists():
        return LeagueDatabaseSection()
    saved = tomllib.loads(run.config_path.read_text()).get("league", {})
    return LeagueDatabaseSection(**saved.get("database", {}))
