"""Snapshot retention in a league run: retired snapshots lose their weights (files and model
pool) after the grace period and keep their database rows; the run trains on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from msagent.league_db import DATABASE_NAME
from msagent.rundir import RunDir
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
