"""The league database: every match, rating and snapshot of a league run, in SQLite (the
run's ``league.db``) or PostgreSQL, with its schema migrated forward by Alembic."""

from msagent.league_db.database import LeagueDatabase
from msagent.league_db.engine import DATABASE_NAME, database_url, redact

__all__ = ["DATABASE_NAME", "LeagueDatabase", "database_url", "redact"]
