"""The GPU share each learner and inference server asks Ray for when its device names a GPU
and its config gives no ``num_gpus``: Ray hides the GPUs from actors that ask for none."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.train.gpu_share import gpu_instances, gpu_resources, wants_gpu
from msagent.train.run_services import RunInfo
from msagent.train.wiring import plan_run
from tests.train.helpers import example_config
from tests.train.league_helpers import league_config


def test_only_gpu_devices_ask_for_a_share() -> None:
    assert wants_gpu("cuda") and wants_gpu("cuda:1") and not wants_gpu("cpu")


def test_a_learner_and_a_server_on_the_gpu_share_it_and_cpu_services_ask_for_none(
        tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "ray", 'services.learner.device="cuda"',
                         'services.inference.mode="central"', "services.inference.num=3",
                         'services.inference.device="cuda"')
    assert gpu_instances(cfg, [cfg.services.learner]) == 4
    sv = cfg.services
    assert gpu_resources(sv.learner, 4).num_gpus == 0.25
    assert gpu_resources(sv.inference, 4).num_gpus == 0.25
    assert gpu_resources(sv.env_worker, 4).num_gpus == 0.0  # (no device: the CPU)
    cpu = example_config(tmp_path, "ray")
    assert gpu_instances(cpu, [cpu.services.learner]) == 0 and gpu_resources(cpu.services.learner, 0).num_gpus == 0.0


def test_a_league_s_learners_share_one_gpu_unless_the_config_gives_num_gpus(
        tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "ray", 'services.learner.device="cuda"')
    learners = [cfg.player_learner(p) for p in cfg.league.player_ids()]
    assert len(learners) == 3 and gpu_instances(cfg, learners) == 3
    assert gpu_resources(cfg.services.learner, 3).num_gpus == pytest.approx(0.3333)
    told = league_config(tmp_path, "ray", 'services.learner.device="cuda"',
                         "services.learner.resources.num_gpus=1")
    assert gpu_instances(told, [told.player_learner(p) for p in told.league.player_ids()]) == 0
    assert gpu_resources(told.services.learner, 0).num_gpus == 1.0


def test_a_player_s_own_learner_device_and_resources_are_its_own(tmp_path: Path) -> None:
    """A player on the CPU takes no share; one that says num_gpus gets it; the others share
    what is left of one GPU."""
    cfg = league_config(tmp_path, "ray", 'services.learner.device="cuda"', (
        'league.players=[{id="main", role="main"}, '
        '{id="main_exploiter", role="main_exploiter", learner={device="cpu"}}, '
        '{id="league_exploiter", role="league_exploiter", learner={resources={num_gpus=1}}}]'))
    learners = {p: cfg.player_learner(p) for p in cfg.league.player_ids()}
    assert gpu_instances(cfg, list(learners.values())) == 1  # main alone asks for a share
    plan = plan_run(cfg, RunInfo())
    assert {p: spec.resources.num_gpus for p, spec in plan.learners.items()} == {
        "main": 1.0, "main_exploiter": 0.0, "league_exploiter": 1.0}
    assert plan.learners["main_exploiter"].args[0].device == "cpu"
