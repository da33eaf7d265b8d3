"""A league run killed (SIGKILL) at a random point: every checkpoint it wrote is one cut (no
snapshot or update count in the league's state is ahead of its learner's saved version), its
league database lost no result, and the resumed run's learners never take a saved snapshot's
version again (its weights stay the weights the league measured)."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from msagent.config import dump_config
from msagent.league_db import DATABASE_NAME
from msagent.rundir import RunDir
from msagent.train.league_plan import league_snapshot_keys
from msagent.train.resume import plan_resume
from tests.train.helpers import train_until
from tests.train.league_helpers import EQUAL_SHARES, league_config

ROLES = ("main", "main_exploiter", "league_exploiter")


def check_cut(state: dict[str, Any]) -> int:
    """Assert that the league's state is not ahead of any learner's; the snapshots checked."""
    learners = {p: part["counters"] for p, part in state["learners"].items()}
    checked = 0
    for player in state["league"]["players"]:
        saved = learners[player["id"]]
        assert max(player["snapshots"], default=0) <= saved["version"], (player, saved)
        assert player["updates_at_snapshot"] <= saved["updates"], (player, saved)
        checked += len(player["snapshots"])
    return checked


def _digests(run_dir: RunDir, league: dict[str, Any]) -> dict[str, str]:
    """The snapshot files the league's state names, by key, as hashes of their bytes."""
    return {str(k): hashlib.sha256(run_dir.snapshots.path(k).read_bytes()).hexdigest()
            for k in league_snapshot_keys(league)}


@pytest.mark.slow
def test_a_killed_league_resumes_from_one_cut_and_never_retakes_a_saved_version(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "services.evaluator.num=0", EQUAL_SHARES,
                        "services.learner.checkpoint_every_s=0.3", "run.stop.time_s=300",
                        *(f"league.roles.{role}.snapshot_every_updates=1" for role in ROLES))
    config = tmp_path / "league.toml"
    config.write_text(dump_config(cfg))
    proc = subprocess.Popen([sys.executable, "-m", "msagent", "train", str(config)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True,
                            env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
    seen: set[int] = set()
    snapshots = 0
    rng = random.Random(56)
    cuts = rng.randint(4, 7)  # checkpoints checked before the kill (a slow machine writes
    try:                      # fewer a second), then a random point within half a second
        kill_at = None
        deadline = time.monotonic() + 180
        while kill_at is None or time.monotonic() < kill_at:
            assert time.monotonic() < deadline and proc.poll() is None, (
                f"{len(seen)} checkpoints, {cuts} wanted")
            for run in Path(cfg.run.root).glob("*/"):
                snapshots += _check_new(RunDir(run), seen)
            if len(seen) >= cuts and kill_at is None:
                kill_at = time.monotonic() + rng.uniform(0.0, 0.5)
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(seen) >= 4 and snapshots > len(seen), (seen, snapshots)  # cuts with snapshots
    run_dir = RunDir(next(Path(cfg.run.root).glob("*/")))
    plan = plan_resume(cfg, run_dir)
    check_cut({"learners": {p: {"counters": c} for p, c in _counters(run_dir, plan.step)},
               "league": plan.league})
    # the killed driver (with the league service in it) lost no result it acknowledged: the
    # database holds every result of the cut, numbered without a gap, and those after it
    with sqlite3.connect(run_dir.path / DATABASE_NAME) as db:
        seqs = [s for (s,) in db.execute("select seq from matches order by id")]
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= plan.league["reported"]
    if os.environ.get("MSAGENT_TEST_RESUME_AFTER_KILL") != "1":
        # the resume below hung once on stop in CI (2026-11-30: its STOP file was not obeyed
        # within 120 s, and the run left behind broke the worker's next tests): kept off the
        # default suite until that is found (issue 56); MSAGENT_TEST_RESUME_AFTER_KILL=1 runs it
        return
    before = _digests(run_dir, plan.league)
    saved = {p["id"]: max(p["snapshots"]) for p in plan.league["players"]}
    result = train_until(cfg, run_dir, lambda: all(
        run_dir.snapshots.newest(p, 1)[0].version > saved[p] + 2 for p in ROLES), 120,
        "two new snapshots of every player", resume=plan)
    assert _digests(run_dir, plan.league) == before  # no saved snapshot was written again
    assert result["league"]["summary"]["historical"] > len(before)


def _check_new(run_dir: RunDir, seen: set[int]) -> int:
    """Check every checkpoint not yet seen (one deleted meanwhile is skipped); snapshots."""
    checked = 0
    for step in run_dir.checkpoint_steps():
        if step in seen:
            continue
        try:
            state = run_dir.load_checkpoint(step).state
        except (FileNotFoundError, OSError):
            continue  # the store kept only the newest three
        if "league" in state:
            checked += check_cut(state)
            seen.add(step)
    return checked


def _counters(run_dir: RunDir, step: int) -> list[tuple[str, dict[str, Any]]]:
    """Each learner's counters in checkpoint ``step``."""
    state = run_dir.load_checkpoint(step).state
    return [(p, part["counters"]) for p, part in state["learners"].items()]
