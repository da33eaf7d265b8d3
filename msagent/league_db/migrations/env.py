"""Alembic's entry point for the league database's migrations: run on the connection that
``msagent.league_db.migrate`` hands over (no alembic.ini, no logging set-up of its own)."""

from __future__ import annotations

from alembic import context

from msagent.league_db.schema import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata,
                  render_as_batch=connection.dialect.name == "sqlite")
with context.begin_transaction():
    context.run_migrations()
