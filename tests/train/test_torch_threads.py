"""``run.torch_threads``: the torch intra-op threads each service process of a run uses."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from msagent.errors import ConfigError
from msagent.rundir import RunDir
from msagent.train import run_training
from tests.train.helpers import example_config


def test_a_local_run_trains_with_the_configured_torch_threads(tmp_path: Path) -> None:
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        cfg = example_config(tmp_path, "local", "run.torch_threads=2",
                             "run.stop.env_steps=2048")
        result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
        assert result["updates"] > 0
        assert torch.get_num_threads() == 2  # the inline services ran in this process
    finally:
        torch.set_num_threads(before)


def test_the_default_is_one_thread_and_zero_is_refused(tmp_path: Path) -> None:
    assert example_config(tmp_path, "local").run.torch_threads == 1
    with pytest.raises((ConfigError, ValueError), match="torch_threads"):
        example_config(tmp_path, "local", "run.torch_threads=0")
