"""``[league.database]``: where a league run keeps its history (every match, rating and
snapshot; see :mod:`msagent.league_db`).

Example::

    [league.database]
    url = ""        # "": RUN_DIR/league.db (SQLite); or "postgresql://user:pw@host:5432/db"
    url_env = ""    # or the name of an environment variable that holds the URL (a password
                    # stays out of the run's saved config)
"""

from __future__ import annotations

import os

from pydantic import field_validator

from msagent.config.base import Section
from msagent.errors import ConfigError


class LeagueDatabaseSection(Section):
    """The league database.

    Attributes:
        enabled: Keep the history in a database (off: only the league's state in checkpoints).
        url: ``sqlite:///PATH`` or ``postgresql://USER:PASSWORD@HOST:PORT/DB``; empty: the
            run's own SQLite file, ``RUN_DIR/league.db``. Several runs may share one
            PostgreSQL database: every row names its run id.
        url_env: Name of an environment variable of the driver's that holds the URL (read at
            the start of the run; its value is not written into the run directory).
    """

    enabled: bool = True
    url: str = ""
    url_env: str = ""

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        """Only SQLite and PostgreSQL URLs."""
        if value and not value.startswith(("sqlite:///", "postgresql://", "postgres://",
                                           "postgresql+psycopg://")):
            raise ValueError("league.database.url: use sqlite:///PATH or "
                             "postgresql://USER:PASSWORD@HOST:PORT/DB (or leave it empty for "
                             "RUN_DIR/league.db)")
        return value

    def resolved_url(self) -> str:
        """The URL set, from ``url_env`` if named ("" for the run's own file)."""
        if not self.url_env:
            return self.url
        value = os.environ.get(self.url_env, "")
        if not value:
            raise ConfigError(f"league.database.url_env names {self.url_env!r}, which is not "
                              "set in this environment")
        return self._known_scheme(value)
