"""A league with central inference: frozen snapshots and players' newest parameters are
answered by the inference server (one batched call per ModelKey), in Ray mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.rundir import RunDir
from tests.train.helpers import feed_state, train_until
from tests.train.league_helpers import EQUAL_SHARES, league_config

ROLES = ("main", "main_exploiter", "league_exploiter")
"""The example league's players (each named after its role)."""


MLP_AGENT = Path(__file__).resolve().parents[2] / "examples/tictactoe/tictactoe_mlp_agent.py"
PLAYERS = EQUAL_SHARES.replace('role = "main_exploiter"}',
                               f'role = "main_exploiter", agent = {json.dumps(str(MLP_AGENT))}}}')
"""Equal shares; the main exploiter has a network of its own (an MLP beside the CNN)."""


@pytest.mark.slow
def test_a_league_trains_with_central_inference(ray_only: str, tmp_path: Path) -> None:
    """The server builds each player's own network (the main exploiter's is an MLP), and the
    evaluator, set to play the main exploiter, plays its network against the random bot."""
    assert "agent = " in PLAYERS
    cfg = league_config(tmp_path, "ray", "run.stop.time_s=150", PLAYERS,  # equal updates
                        'services.evaluator.player="main_exploiter"',
                        'services.evaluator.opponents=["bot:random"]',
                        'services.inference.mode="central"', "services.inference.num=1",
                        "services.env_worker.num=2", "services.env_worker.num_envs=6",
                        *(f"league.roles.{role}.snapshot_every_updates=3" for role in ROLES))
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    # stopped (STOP file) once every player has trained and 100 matches are in, not after a
    # fixed time that a loaded machine may fall short of
    result = train_until(cfg, run_dir, lambda: _trained(run_dir), 150,
                         "110 matches and a snapshot past the first of every player")
    summary = result["league"]["summary"]
    assert result["inference_mean_batch"] is not None
    assert summary["matches"] > 100 and summary["historical"] >= 3
    assert all(p["updates"] > 0 for p in result["league"]["players"].values())
    assert {r["opponent"] for r in feed_state(run_dir)["eval"]} == {"bot:random"}


def _trained(run_dir: RunDir) -> bool:
    """Whether the feed shows over 110 matches and every player past its first snapshot."""
    league = feed_state(run_dir).get("league") or {}
    players = {p["id"]: p["snapshots"] for p in league.get("players", [])}
    return (league.get("reported", 0) > 110 and set(players) == set(ROLES)
            and all(max(players[p], default=0) > 1 for p in ROLES)
            and bool(feed_state(run_dir).get("eval")))
