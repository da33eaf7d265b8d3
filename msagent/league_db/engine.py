"""Opening a league database: the URL (a run's own SQLite file by default), the engine with
SQLite's WAL journal, and the schema migrated forward with Alembic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect

DATABASE_NAME = "league.db"
"""The SQLite file a league run keeps in its run directory."""
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 30_000
"""How long a SQLite writer waits for another's lock before failing (a reader mid-query)."""


def database_url(url: str, run_dir: str | Path) -> str:
    """The database a run writes to: ``url`` if set, else ``RUN_DIR/league.db``."""
    if url:
        return url
    return f"sqlite:///{Path(run_dir).resolve() / DATABASE_NAME}"


def make_engine(url: str) -> Engine:
    """An engine for ``url`` (``postgresql://`` goes through psycopg 3; SQLite in WAL mode,
    so readers never block the league's writes)."""
    if url.startswith(("postgresql://", "postgres://")):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    if not url.startswith(("sqlite", "postgresql")):
        raise ValueError(f"league database {redact(url)!r}: use sqlite:///PATH or "
                         "postgresql://USER:PASSWORD@HOST:PORT/DB")
    engine = create_engine(url, pool_pre_ping=True)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    """WAL (readers beside the writer), NORMAL sync (a committed row survives a killed
    process: WAL is flushed to the OS on commit), a busy timeout instead of instant errors."""
    cursor = connection.cursor()
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", f"busy_timeout={BUSY_TIMEOUT_MS}",
                   "foreign_keys=ON"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def migrate(engine: Engine, target: str = "head") -> None:
    """Bring the schema to the newest revision (a new database is created; an older run's is
    migrated forward), or to ``target``. Alembic is imported here: readers never pay it."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, target)


def revision(engine: Engine) -> str | None:
    """The schema revision a database is at (None: not a league database yet)."""
    if not inspect(engine).has_table("alembic_version"):
        return None
    with engine.connect() as connection:
        return connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


def head_revision() -> str:
    """The newest revision this msagent knows."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return str(ScriptDirectory.from_config(config).get_current_head())


def redact(url: str) -> str:
    """``url`` without its password (for messages and logs)."""
    head, sep, rest = url.partition("://")
    if "@" not in rest or ":" not in rest.split("@", 1)[0]:
        return url
    user = rest.split("@", 1)[0].split(":", 1)[0]
    return f"{head}{sep}{user}:***@{rest.split('@', 1)[1]}"
