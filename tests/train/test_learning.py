"""End to end: the CartPole example learns, in one process and on Ray."""

from __future__ import annotations

from pathlib import Path

import pytest
import ray

from msagent.rundir import RunDir
from msagent.runtime import state
from msagent.train import run_training
from tests.train.helpers import example_config


@pytest.mark.slow
def test_local_mode_solves_cartpole(tmp_path: Path) -> None:
    assert state.installed() is None  # run_training starts (and stops) its own backend
    cfg = example_config(tmp_path, "local", "run.stop.time_s=120")
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["mean_return"] >= 475
    assert result["updates"] > 0 and result["episodes"] >= cfg.run.stop.return_window
    assert result["dropped_fragments"] == 0  # sync mode: every fragment is acted by the newest
    assert state.installed() is None


@pytest.mark.slow
def test_ray_mode_learns_on_the_session_ray(ray_only: str, tmp_path: Path) -> None:
    session_backend = state.installed()
    cfg = example_config(tmp_path, "ray", "run.stop.mean_return=200",
                         "run.stop.time_s=120")
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["mean_return"] >= 200 and result["updates"] > 0
    # the run used the Ray it found and stopped only its own services: Ray is still up
    assert state.installed() is session_backend
    assert session_backend.services() == []
    assert session_backend.forget_topics() == 0  # nor topics a next run could adopt
    assert ray.is_initialized()


@pytest.mark.slow
def test_ray_mode_learns_with_a_central_inference_server(ray_only: str, tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "ray", 'services.inference.mode="central"',
                         "run.stop.mean_return=100", "run.stop.time_s=90")
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
    # a random CartPole policy averages ~22: the workers' actions came from the learner's
    # parameters through the inference server's process
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["mean_return"] >= 100 and result["updates"] > 0
    assert state.installed().services() == []


@pytest.mark.slow
def test_impala_solves_cartpole_with_actors_that_never_wait(ray_only: str,
                                                            tmp_path: Path) -> None:
    import json

    from msagent.config import load_config

    example = Path(__file__).resolve().parents[2] / "examples" / "cartpole_impala.toml"
    cfg = load_config(example, [f"run.root={json.dumps(str(tmp_path))}",
                                "run.stop.time_s=300", "logging.progress=false",
                                "logging.tensorboard=false"])
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    assert result["mean_return"] >= 475, result
    assert result["updates"] > 0 and result["dropped_fragments"] < result["updates"] * 32
