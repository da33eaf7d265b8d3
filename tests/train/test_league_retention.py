"""Snapshot retention in a league run: retired snapshots lose their weights (files and model
pool) after the grace period and keep their database rows; the run trains on. And a league
run writing its history to PostgreSQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from msagent.config import dump_config
from msagent.league_db import DATABASE_NAME
from msagent.rundir import RunDir
from tests.postgres_server import postgres_url  # noqa: F401  (a fixture)
from tests.train.helpers import train_until
from tests.train.league_helpers import EQUAL_SHARES, league_config

ROLES = ("main", "main_exploiter", "league_exploiter")


def _deleted(run_dir: RunDir) -> int:
    """Snapshots whose weights retention deleted, as the league database says."""
    path = run_dir.path / DATABASE_NAME
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        return db.execute("select count(*) from snapshots where weights_deleted").fetchone()[0]


@pytest.mark.slow
def test_retention_deletes_the_weights_of_retired_snapshots_and_keeps_their_rows(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "services.evaluator.num=0", EQUAL_SHARES,
                        "run.stop.time_s=120", "league.retention.every_s=0.5",
                        "league.retention.keep_last=2", "league.retention.min_draw=0.6",
                        "league.retention.grace_s=1",
                        *(f"league.roles.{role}.snapshot_every_updates=1" for role in ROLES))
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result = train_until(cfg, run_dir, lambda: _deleted(run_dir) >= 6, 120,
                         "six snapshots' weights deleted")
    state = run_dir.checkpoints.latest().state["league"]
    gone = {r["ref"] for r in state["retired"] if r["deleted"]}
    files = {p.name for p in (run_dir.path / "snapshots").glob("*.safetensors")}
    kept = {h["ref"] for h in state["historical"]}
    assert len(gone) >= 6 and not gone & kept
    assert all(f"{ref.replace(':', '@')}.safetensors" not in files for ref in gone)
    assert all(f"{ref.replace(':', '@')}.safetensors" in files for ref in kept)
    with sqlite3.connect(run_dir.path / DATABASE_NAME) as db:
        rows = {r for (r,) in db.execute("select participant from snapshots")}
        marked = {r for (r,) in db.execute(
            "select participant from snapshots where weights_deleted")}
    assert gone | kept <= rows and gone <= marked  # the rows stay, marked
    assert result["league"]["summary"]["retired"] >= len(gone)


@pytest.mark.slow
def test_a_league_writes_its_history_to_postgresql_named_by_an_environment_variable(
        inline_only: str, tmp_path: Path, postgres_url: str,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy import text

    from msagent.league_db.engine import make_engine

    monkeypatch.setenv("MSAGENT_TEST_LEAGUE_DB", postgres_url)
    cfg = league_config(tmp_path, "local", "services.evaluator.num=0", "run.stop.time_s=60",
                        "services.learner.checkpoint_every_s=2",
                        'league.database.url_env="MSAGENT_TEST_LEAGUE_DB"')
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_dir.write_config(dump_config(cfg))  # as msagent train does
    result = train_until(cfg, run_dir, lambda: _checkpoints(run_dir) >= 1, 60,
                         "a checkpoint")
    assert not (run_dir.path / DATABASE_NAME).exists()  # nothing written beside the run
    engine = make_engine(postgres_url)
    with engine.connect() as conn:
        count = conn.execute(text("select count(*) from matches where run_id = :r"),
                             {"r": run_dir.run_id}).scalar_one()
        config = conn.execute(text("select config from runs where run_id = :r"),
                              {"r": run_dir.run_id}).scalar_one()
    engine.dispose()
    assert count == result["league"]["summary"]["matches"] > 0
    assert "MSAGENT_TEST_LEAGUE_DB" in config and "msagent-test-pw" not in config


def _checkpoints(run_dir: RunDir) -> int:
    """How many checkpoints the run wrote."""
    return len(run_dir.checkpoint_steps())
