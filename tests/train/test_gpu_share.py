"""The GPU share each learner and inference server asks Ray for when its device names a GPU
and its config gives no ``num_gpus``: Ray hides the GPUs from actors that ask for none."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.train.gpu_share import gpu_instances, gpu_resources, wants_gpu
from tests.train.helpers import example_config
from tests.train.league_helpers import league_config


def test_only_gpu_devices_ask_for_a_share() -> None:
    assert wants_gpu("cuda") and wants_gpu("cuda:1") and not wants_gpu("cpu")


def test_a_learner_and_a_server_on_the_gpu_share_it_and_cpu_services_ask_for_none(
        tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "ray", 'services.learner.device="cuda"',
                         'services.inference.mode="central"', "services.inference.num=3",
                         'services.inference.device="cuda"')
    assert gpu_instances(cfg, 1) == 4
    sv = cfg.services
    assert gpu_resources(sv.learner, 4).num_gpus == 0.25
    assert gpu_resources(sv.inference, 4).num_gpus == 0.25
    assert gpu_resources(sv.env_worker, 4).num_gpus == 0.0  # (no device: the CPU)
    cpu = example_config(tmp_path, "ray")
    assert gpu_instances(cpu, 1) == 0 and gpu_resources(cpu.services.learner, 0).num_gpus == 0.0


def test_a_league_s_learners_share_one_gpu_unless_the_config_gives_num_gpus(
        tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "ray", 'services.learner.device="cuda"')
    players = len(cfg.league.players)
    assert players == 3 and gpu_instances(cfg, players) == 3
    assert gpu_resources(cfg.services.learner, 3).num_gpus == pytest.approx(0.3333)
    told = league_config(tmp_path, "ray", 'services.learner.device="cuda"',
                         "services.learner.resources.num_gpus=1")
    assert gpu_instances(told, 3) == 0
    assert gpu_resources(told.services.learner, 0).num_gpus == 1.0
