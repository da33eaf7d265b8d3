"""``--resume``: a run continues from its run directory's last complete checkpoint."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from msagent.rundir import RunDir, unflatten_state
from msagent.services.learner import Learner, LearnerSettings
from msagent.train import run_training
from msagent.train.wiring import policy_scripts
from tests.train.helpers import example_config

ROUND = 2 * 16 * 32
"""Env steps of one round of fragments in the example (2 workers x 16 envs x 32 steps)."""


def leave_half_written_checkpoints(run_dir: RunDir) -> None:
    """Put what a crash mid-save leaves behind next to the real checkpoints, at newer steps."""
    folder = run_dir.checkpoint_dir
    (folder / f"ckpt-{999:09d}.safetensors").write_bytes(b"\x00 torn tensor file")
    (folder / f".ckpt-{998:09d}.safetensors.x1y2.tmp").write_bytes(b"\x00 temp file")


def test_resume_continues_the_learner_from_the_last_complete_checkpoint(
        inline_only: str, tmp_path: Path) -> None:
    first_cfg = example_config(tmp_path, "local", "run.stop.mean_return=0",
                               f"run.stop.env_steps={12 * ROUND}", "run.stop.time_s=60",
                               "services.learner.checkpoint_every_s=0.05")
    run_dir = RunDir.create(first_cfg.run.root, first_cfg.run.name)
    first = run_training(first_cfg, run_dir, False)
    assert first["stop_reason"].startswith("env_steps"), first
    steps = run_dir.checkpoint_steps()
    assert steps[-1] == first["updates"] >= 10  # the final checkpoint is taken at stop
    assert len(steps) >= 2  # and periodic ones before it
    leave_half_written_checkpoints(run_dir)

    # what --resume loads: the complete checkpoint, not the torn or temporary files
    last = run_dir.latest_checkpoint()
    assert last is not None and last.step == first["updates"]
    restored = Learner(LearnerSettings(policy_scripts(first_cfg), first_cfg.ppo_config(), 32,
                                       run_dir=str(run_dir.path), resume=True))
    assert restored.c.updates == first["updates"]
    saved = unflatten_state(last.tensors, last.state["skeleton"])["policy"]
    for name, value in restored.ppo.policy.get_weights().items():
        assert np.array_equal(value, saved[name]), name

    # a short second run: far fewer updates than the first, so only a learner that went on
    # from the checkpoint's counters can end above the first run's count
    second_cfg = example_config(tmp_path, "local", "run.stop.mean_return=0",
                                "run.stop.env_steps=0", "run.stop.time_s=0.5")
    second = run_training(second_cfg, RunDir.open(run_dir.path), True)
    assert second["stop_reason"].startswith("time_s"), second
    assert first["updates"] < second["updates"] < 999
    assert run_dir.checkpoint_steps()[-1] == second["updates"]
    assert not list(run_dir.checkpoint_dir.glob(".*.tmp"))  # saving swept the temp file
