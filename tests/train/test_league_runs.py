"""League runs end to end on tic-tac-toe: the league grows, the main agent learns to beat a
bot it never trained against, and a resumed league is the league that was checkpointed."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.rundir import RunDir
from msagent.services.learner_state import LEAGUE_REQUIRED_KEYS
from msagent.train import run_training
from msagent.train.resume import plan_resume
from tests.train.league_helpers import league_config


def eval_win_rate(result: dict, opponent: str) -> tuple[float, int]:
    """The main agent's win rate against ``opponent`` over both seats, and the games."""
    rows = [r for r in result["league"]["eval"] if r["opponent"] == opponent]
    games = sum(r["games"] for r in rows)
    return sum(r["wins"] for r in rows) / max(games, 1), games


@pytest.mark.slow
def test_a_seeded_league_grows_and_its_main_agent_beats_the_random_bot(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "run.stop.time_s=75",
                        "league.roles.main.snapshot_every_updates=5",
                        "league.roles.main_exploiter.snapshot_every_updates=5",
                        "league.roles.league_exploiter.snapshot_every_updates=5",
                        'services.evaluator.opponents=["bot:random"]')
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    summary = result["league"]["summary"]
    assert summary["historical"] >= 6, summary  # every player snapshotted at least twice
    rate, games = eval_win_rate(result, "bot:random")
    # random against random wins ~44% over both seats (58% first, 29% second)
    assert games >= 100 and rate >= 0.75, (rate, games)
    assert "main" in result["league"]["ladder"]
    assert Path(result["league"]["heatmap"]).stat().st_size > 0


@pytest.mark.slow
def test_resume_restores_the_league_exactly_and_versions_go_on(inline_only: str,
                                                                tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "run.stop.time_s=12", "services.evaluator.num=0",
                        "league.roles.main.snapshot_every_updates=3")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    first = run_training(cfg, run_dir)
    saved = run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS)
    plan = plan_resume(cfg, run_dir)
    assert plan.step == saved.step and plan.league == saved.state["league"]
    assert plan.league["players"] and plan.league["historical"]
    second = run_training(cfg, run_dir, plan)
    for player, figures in first["league"]["players"].items():
        assert second["league"]["players"][player]["version"] > figures["version"]
    again = run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS).state["league"]
    before = {h["ref"] for h in plan.league["historical"]}
    assert before <= {h["ref"] for h in again["historical"]}  # no snapshot forgotten
    assert again["reported"] > plan.league["reported"]  # counts went on from the saved ones


def test_an_evaluator_averaging_snapshots_plays_and_keeps_its_games_from_the_league(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "run.stop.time_s=15",
                        "league.roles.main.snapshot_every_updates=3",
                        "services.evaluator.average_snapshots=3",
                        'services.evaluator.opponents=["bot:random"]')
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    rate, games = eval_win_rate(result, "bot:random")
    assert games >= 20, games  # the averaged player played
    # its games are not the player's own, so the league never saw the bot
    assert "bot:random" not in result["league"]["ladder"]
