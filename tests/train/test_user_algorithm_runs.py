"""``examples/cartpole_kl_pg.toml``: a user's algorithm (``examples/algorithms/kl_pg.py``) trains
through ``msagent train``'s services like a built-in one: it learns CartPole in one process, and
on Ray its learner builds it in its own process, checkpoints it and resumes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.rundir import RunDir, unflatten_state
from msagent.train import run_training
from msagent.train.resume import plan_resume

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_kl_pg.toml"


def kl_pg_config(root: Path, mode: str, *overrides: str):
    """The example in ``mode``, quiet, writing under ``root``."""
    return load_config(EXAMPLE, [f"run.root={json.dumps(str(root))}",
                                 f"run.mode={json.dumps(mode)}", "logging.progress=false",
                                 "logging.tensorboard=false", *overrides])


@pytest.mark.slow
def test_the_user_algorithm_learns_cartpole(inline_only: str, tmp_path: Path) -> None:
    """Seed 0 reaches a mean return of 400 within 160 k steps (500 after 80 k as measured,
    12 s; with a learning rate of 1e-7 it ends at 24)."""
    cfg = kl_pg_config(tmp_path, "local", "run.stop.mean_return=400.0",
                       "run.stop.env_steps=160_000")
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    assert result["mean_return"] >= 400.0, result


@pytest.mark.slow
def test_a_ray_learner_builds_checkpoints_and_resumes_the_user_algorithm(
        ray_only: str, tmp_path: Path) -> None:
    cfg = kl_pg_config(tmp_path, "ray", "run.stop.env_steps=6144")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    first = run_training(cfg, run_dir)
    assert first["updates"] >= 2 and first["checkpoint"] is not None
    plan = plan_resume(cfg, run_dir)
    last = run_dir.load_checkpoint(plan.step)
    saved = unflatten_state(last.tensors, last.state["skeleton"])
    assert saved["ppo"]["updates"] == first["updates"]  # the script's own state_dict
    assert set(saved["ppo"]["reference"]) == set(saved["policy"])  # its reference network
    more = cfg.model_copy(update={"run": cfg.run.model_copy(update={
        "stop": cfg.run.stop.model_copy(update={"env_steps": 12288})})})
    resumed = run_training(more, run_dir, plan)
    assert resumed["updates"] > first["updates"]
