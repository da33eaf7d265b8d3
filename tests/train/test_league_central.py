"""A league with central inference: frozen snapshots and players' newest parameters are
answered by the inference server (one batched call per ModelKey), in Ray mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.rundir import RunDir
from msagent.train import run_training
from tests.train.league_helpers import league_config


@pytest.mark.slow
def test_a_league_trains_with_central_inference(ray_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "ray", "run.stop.time_s=25", "services.evaluator.num=0",
                        'services.inference.mode="central"', "services.inference.num=1",
                        "services.env_worker.num=2", "services.env_worker.num_envs=6",
                        "league.roles.main.snapshot_every_updates=3")
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    summary = result["league"]["summary"]
    assert result["inference_mean_batch"] is not None
    assert summary["matches"] > 100 and summary["historical"] >= 3
    assert all(p["updates"] > 0 for p in result["league"]["players"].values())
