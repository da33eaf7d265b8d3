"""End to end: a recurrent policy learns on Ray with its memory carried through a central
inference server (states go with each predict request and come back with the actions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.rundir import RunDir
from msagent.train import run_training

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_lstm.toml"


@pytest.mark.slow
def test_lstm_policy_learns_masked_cartpole_through_central_inference(ray_only: str,
                                                                      tmp_path: Path) -> None:
    cfg = load_config(EXAMPLE, [f"run.root={json.dumps(str(tmp_path))}", 'run.mode="ray"',
                                'services.inference.mode="central"', "logging.progress=false",
                                "logging.tensorboard=false", "run.stop.mean_return=60",
                                "run.stop.time_s=240"])
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
    # a random policy averages ~22; the acting states went through the inference server and
    # the learner replayed the stored ones (a wrong replay shows as a stalled learner)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["mean_return"] >= 60 and result["updates"] > 0
