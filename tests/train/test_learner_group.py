"""Learner groups on the embedded Ray: two learners of one player form one gloo group and
train CartPole; killing one stops the run naming it within the collective timeout, and
``--resume`` continues from the last checkpoint."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest

from msagent.errors import ServiceDiedError
from msagent.rundir import RunDir
from msagent.train import run_training
from msagent.train.resume import plan_resume
from tests.services.helpers import wait_until
from tests.train.helpers import example_config, feed_state, train_until
from tests.train.test_faults import Background, handle_of

GROUP = ("services.learner.num=2", "services.learner.collective_timeout_s=20")


def ranks_stats() -> list[dict]:
    """Both learners' statistics, rank 0 first."""
    return sorted(handle_of("Learner").call_all("stats"), key=lambda s: s["rank"])


@pytest.mark.slow
def test_a_group_holds_equal_weights_dies_by_name_and_its_resume_solves_cartpole(
        ray_only: str, tmp_path: Path) -> None:
    """Both ranks hold the same weights while training (read at the same update: they advance
    in lockstep); killing one rank stops the run naming it; the resumed group goes on from
    the last checkpoint and solves CartPole (one run and its resume for all three: a group
    takes long to start)."""
    # a learning rate decayed by time: the ranks agree on one clock (an all-reduce per update)
    run = Background(tmp_path, *GROUP, "run.stop.time_s=120",
                     "services.learner.checkpoint_every_s=3", "algorithm.anneal_lr=true",
                     "algorithm.anneal_s=600")
    wait_until(lambda: handle_of("Learner") and len(handle_of("Learner").instance_ids()) == 2
               and min(s["updates"] for s in ranks_stats()) >= 3, timeout_s=90,
               what="both ranks to update")
    compared = 0
    for _ in range(50):
        a, b = handle_of("Learner").call_all("export_state")
        if a["state"]["counters"]["updates"] != b["state"]["counters"]["updates"]:
            continue
        for name, value in a["tensors"].items():
            np.testing.assert_allclose(b["tensors"][name], value, atol=1e-6, err_msg=name)
        compared += 1
        if compared == 3:
            break
    assert compared >= 1
    wait_until(lambda: run.run_dir.checkpoint_steps(), timeout_s=120, what="a checkpoint")
    os.kill(handle_of("Learner").placements()[1]["pid"], signal.SIGKILL)
    run.join(timeout_s=90)
    assert isinstance(run.error, ServiceDiedError), run.error
    assert "Learner" in str(run.error)
    cfg = example_config(tmp_path, "ray", *GROUP, "run.stop.mean_return=475",
                         "run.stop.env_steps=1000000", "services.learner.checkpoint_every_s=30")
    plan = plan_resume(cfg, run.run_dir)
    # at most 150 s more than the checkpoint's elapsed time (time_s counts the whole run)
    cfg.run.stop.time_s = plan.progress.get("elapsed_s", 0.0) + 150.0
    resumed = run_training(cfg, run.run_dir, plan)
    assert resumed["updates"] > plan.step
    assert resumed["mean_return"] >= 475, resumed
    assert resumed["checkpoint"] is not None
    tensors = run.run_dir.latest_checkpoint().tensors
    assert tensors and all(np.isfinite(v).all() for v in tensors.values())


@pytest.mark.slow
def test_a_league_of_learner_groups_snapshots_and_resets(ray_only: str, tmp_path: Path) -> None:
    from tests.train.league_helpers import EQUAL_SHARES, league_config

    # equal shares: every player updates each round (the test is about groups, not learning)
    cfg = league_config(tmp_path, "ray", "services.learner.num=2", "services.evaluator.num=0",
                        EQUAL_SHARES,
                        "services.learner.collective_timeout_s=30", "run.stop.time_s=240",
                        "league.roles.main.snapshot_every_updates=3",
                        "league.roles.main_exploiter.snapshot_every_updates=3",
                        "league.roles.league_exploiter.snapshot_every_updates=3")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    # stopped (STOP file) once the feed shows what is checked, not after a fixed 40 s
    result = train_until(cfg, run_dir, lambda: _snapshotted_and_reset(run_dir), 240,
                         "6 snapshots, every player past update 3 and an exploiter reset")
    summary = result["league"]["summary"]
    assert summary["historical"] >= 6, summary
    exploiter = summary["players"]["main_exploiter"]
    assert exploiter["resets"] >= 1, exploiter  # a reset reached both ranks (no hang)
    assert all(p["updates"] > 3 for p in result["league"]["players"].values())


def _snapshotted_and_reset(run_dir: RunDir) -> bool:
    """Whether the feed shows 6 snapshots, a snapshot past update 3 of every player and a reset
    of the main exploiter."""
    league = feed_state(run_dir).get("league") or {}
    players = {p["id"]: p for p in league.get("players", [])}
    return (len(league.get("historical", [])) >= 6 and len(players) == 3
            and all(max(p["snapshots"], default=0) > 4 for p in players.values())
            and players["main_exploiter"]["resets"] >= 1)
