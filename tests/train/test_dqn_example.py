"""``examples/cartpole_dqn.toml``: double DQN written as a user would (``examples/algorithms/
dqn.py`` and the epsilon-greedy agent ``dqn_agent.py``), learning off-policy from a replay
table that samples uniformly, retires fragments after 8 draws and paces the actors with its
samples-per-insert ratio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.rundir import RunDir
from msagent.train import run_training

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_dqn.toml"


@pytest.mark.slow
def test_double_dqn_learns_cartpole_from_a_uniform_replay_table(inline_only: str,
                                                                 tmp_path: Path) -> None:
    """Seed 0 reaches a mean return of 150 (epsilon-greedy, over 20 episodes) within 150 k
    steps (at 54.5 k, after 833 updates, as measured); the ratio keeps the learner at one
    update per ~64 steps (without the actors' wait it made one per ~2,000 and did not learn)."""
    cfg = load_config(EXAMPLE, [f"run.root={json.dumps(str(tmp_path))}", 'run.mode="local"',
                                "logging.progress=false", "logging.tensorboard=false",
                                "run.stop.mean_return=150.0", "run.stop.env_steps=150_000"])
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    assert result["mean_return"] >= 150.0, result
    # 8 fragments of 32 steps per update, each drawn 4 times on average: ~64 steps an update
    assert result["updates"] >= result["env_steps"] / 100, result
