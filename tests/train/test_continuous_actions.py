"""A Box action space trains end to end: the policy's Gaussian samples are clipped for the game
(which refuses actions out of bounds) and learnt from as sampled."""

from __future__ import annotations

from pathlib import Path

from msagent.train import run_training
from tests.train.helpers import example_config


def test_pendulum_trains_with_gaussian_samples_outside_its_bounds(tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "local", 'env.id="Pendulum-v1"', "run.stop.env_steps=8192",
                         "run.stop.mean_return=0", "run.stop.time_s=120")
    result = run_training(cfg, None, False)
    assert result["stop_reason"].startswith("env_steps"), result
    assert result["episodes"] >= 30 and result["env_errors"] == 0  # 200-step episodes
    assert result["updates"] >= 7
