"""A run directory's league database, for readers (``msagent league``, the dashboard): the
URL its saved config names, else its own ``league.db``, opened read-only."""

from __future__ import annotations

import tomllib
from pathlib import Path

from sqlalchemy import Engine

from msagent.config.league_database import LeagueDatabaseSection
from msagent.errors import UserError
from msagent.league_db.reader import reader_engine
from msagent.rundir import RunDir


def run_database(run_dir: str | Path) -> tuple[Engine, str]:
    """A read-only engine on the run's league database, and the run's id in it.

    Raises:
        UserError: the run has no league database (or its URL's variable is not set).
    """
    run = RunDir(Path(run_dir))
    section = LeagueDatabaseSection()
    if run.config_path.exists():
        saved = tomllib.loads(run.config_path.read_text()).get("league", {})
        section = LeagueDatabaseSection(**saved.get("database", {}))
    try:
        return reader_engine(section.resolved_url(), run.path), run.run_id
    except FileNotFoundError as exc:
        raise UserError(f"{run.path} has no league database: {exc}") from exc
