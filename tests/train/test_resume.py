"""``--resume``: a run continues from its run directory's last complete checkpoint, exactly."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from msagent.errors import ConfigError
from msagent.rundir import RunDir, unflatten_state
from msagent.services.learner import Learner, LearnerSettings
from msagent.train import run_training
from msagent.train.resume import plan_resume
from msagent.train.run_services import policy_scripts
from tests.train.helpers import example_config

ROUND = 2 * 16 * 32
"""Env steps of one round of fragments in the example (2 workers x 16 envs x 32 steps)."""


def leave_half_written_checkpoints(run_dir: RunDir) -> None:
    """Put what a crash mid-save leaves behind next to the real checkpoints, at newer steps."""
    folder = run_dir.checkpoint_dir
    (folder / f"ckpt-{999:09d}.safetensors").write_bytes(b"\x00 torn tensor file")
    (folder / f".ckpt-{998:09d}.safetensors.x1y2.tmp").write_bytes(b"\x00 temp file")


def first_run(tmp_path: Path) -> tuple[RunDir, dict]:
    """A short first run with frequent checkpoints and snapshots."""
    cfg = example_config(tmp_path, "local", "run.stop.mean_return=0",
                         f"run.stop.env_steps={12 * ROUND}", "run.stop.time_s=60",
                         "services.learner.checkpoint_every_s=0.05",
                         "services.learner.dump_model_every=2")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    return run_dir, run_training(cfg, run_dir, False)


@pytest.mark.slow
def test_resume_continues_versions_counters_and_progress(inline_only: str,
                                                         tmp_path: Path) -> None:
    run_dir, first = first_run(tmp_path)
    assert first["stop_reason"].startswith("env_steps"), first
    steps = run_dir.checkpoint_steps()
    assert steps[-1] == first["updates"] == first["checkpoint"] >= 10  # final one at stop
    assert len(steps) >= 2  # and periodic ones before it
    leave_half_written_checkpoints(run_dir)

    # what --resume loads: the complete checkpoint, not the torn or temporary files
    plan = plan_resume(example_config(tmp_path, "local"), run_dir)
    assert plan.step == first["updates"]
    assert plan.progress["env_steps"] == first["env_steps"]
    assert plan.progress["episodes"] == first["episodes"]
    restored = Learner(LearnerSettings(policy_scripts(example_config(tmp_path, "local")),
                                       example_config(tmp_path, "local").ppo_config(), 32,
                                       run_dir=str(run_dir.path), resume_step=plan.step))
    last = run_dir.load_checkpoint(plan.step)
    assert restored.c.updates == first["updates"]
    assert restored.version == first["policy_version"]
    saved = unflatten_state(last.tensors, last.state["skeleton"])["policy"]
    for name, value in restored.ppo.policy.get_weights().items():
        assert np.array_equal(value, saved[name]), name

    second_cfg = example_config(tmp_path, "local", "run.stop.mean_return=0",
                                f"run.stop.env_steps={first['env_steps'] + 3 * ROUND}",
                                "run.stop.time_s=0", "services.learner.dump_model_every=2")
    second = run_training(second_cfg, RunDir.open(run_dir.path), True)
    assert second["stop_reason"].startswith("env_steps"), second
    # counters go on from the checkpoint: a few more updates, env steps and episodes
    assert first["updates"] < second["updates"] <= first["updates"] + 5
    assert first["policy_version"] < second["policy_version"]
    assert first["env_steps"] < second["env_steps"] <= first["env_steps"] + 5 * ROUND
    assert second["episodes"] >= first["episodes"]  # not counted from 0 again
    assert run_dir.checkpoint_steps()[-1] == second["updates"]
    assert not list(run_dir.checkpoint_dir.glob(".*.tmp"))  # saving swept the temp file
    marker_log = run_dir.log_path.read_text()
    assert "resuming run" in marker_log and "generation 1" in marker_log


@pytest.mark.slow
def test_resume_refuses_a_checkpoint_of_another_network(inline_only: str,
                                                        tmp_path: Path) -> None:
    run_dir, _ = first_run(tmp_path)
    agent = tmp_path / "wide_agent.py"
    agent.write_text("from msagent.policy import NetworkConfig, Policy\n\n"
                     "def make_policy(observation_space, action_space, seed=None):\n"
                     "    return Policy(observation_space, action_space,\n"
                     "                  NetworkConfig(hidden=(128, 128)), seed=seed)\n")
    cfg = example_config(tmp_path, "local", f"scripts.agent={json.dumps(str(agent))}")
    with pytest.raises(ConfigError, match=r"ckpt-\d{9}\.safetensors: parameter '.*' has shape"):
        plan_resume(cfg, run_dir)


@pytest.mark.slow
def test_unreadable_checkpoints_are_skipped_and_none_readable_is_an_error(
        inline_only: str, tmp_path: Path) -> None:
    run_dir, first = first_run(tmp_path)
    cfg = example_config(tmp_path, "local")
    steps = run_dir.checkpoint_steps()
    newest = run_dir.checkpoints.path(steps[-1], ".json")
    newest.write_text("{}")  # complete files, but not a learner checkpoint
    warnings: list[str] = []
    plan = plan_resume(cfg, run_dir, warnings.append)
    assert plan.step == steps[-2]
    assert len(warnings) == 1 and newest.name in warnings[0] and "skeleton" in warnings[0]
    for step in steps:
        run_dir.checkpoints.path(step, ".safetensors").write_bytes(b"garbage")
    with pytest.raises(ConfigError, match=f"none of its {len(steps)} checkpoints can be read"):
        plan_resume(cfg, run_dir, warnings.append)
