"""``services.learner.device`` and ``services.inference.device``: a learner or an inference
server asked for a GPU it cannot see stops the run naming what torch sees; with CUDA, CartPole
trains end to end with the learner on the GPU (acting on the CPU) and publishes a checked ONNX
model traced from a CPU copy, and again with central inference on the GPU too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from msagent.errors import ConfigError
from msagent.train import run_training
from tests.train.helpers import example_config


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_a_learner_on_a_gpu_that_is_not_there_stops_the_run_naming_it(tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "local", 'services.learner.device="cuda"',
                         "run.stop.time_s=60")
    with pytest.raises(ConfigError, match=r"services.learner.device = 'cuda', but torch sees 0 "
                       r"GPU\(s\) in this process"):
        run_training(cfg, None, False)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_an_inference_server_on_a_gpu_that_is_not_there_stops_the_run(tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "local", 'services.inference.mode="central"',
                         'services.inference.device="cuda"', "run.stop.time_s=60")
    with pytest.raises(ConfigError, match=r"'InferenceServer' failed to start: "
                       r"services.inference.device = 'cuda', but torch sees 0 GPU.*"
                       r"services.inference.resources.num_gpus = 1"):
        run_training(cfg, None, False)


def test_a_device_that_is_no_device_is_refused_by_the_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="services.learner.device"):
        example_config(tmp_path, "local", 'services.learner.device="tpu"')
    with pytest.raises(ConfigError, match=r"device = 'cuda' is where inference servers run: "
                       r"it needs mode = 'central'"):
        example_config(tmp_path, "local", 'services.inference.device="cuda"')


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cartpole_trains_with_its_learner_on_the_gpu_and_publishes_from_a_cpu_copy(
        tmp_path: Path) -> None:
    models = tmp_path / "models"
    cfg = example_config(tmp_path, "local", 'services.learner.device="cuda"',
                         "run.stop.mean_return=200", "run.stop.time_s=240",
                         f"publish.models={json.dumps(str(models))}", 'publish.game="cartpole"')
    result = run_training(cfg, None, False)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["env_errors"] == 0 and result["updates"] > 10
    manifest = json.loads((models / "cartpole" / "latest.json").read_text())
    assert manifest["version"] >= 1 and manifest["action"] == {"n": 2}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cartpole_trains_with_central_inference_and_its_learner_on_the_gpu(
        tmp_path: Path) -> None:
    cfg = example_config(tmp_path, "local", 'services.learner.device="cuda"',
                         'services.inference.mode="central"', 'services.inference.device="cuda"',
                         "run.stop.mean_return=200", "run.stop.time_s=240")
    result = run_training(cfg, None, False)
    assert result["stop_reason"].startswith("mean_return"), result
    assert result["env_errors"] == 0 and result["inference_mean_batch"] is not None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_league_trains_with_its_learners_and_inference_servers_on_the_gpu(
        inline_only: str, tmp_path: Path) -> None:
    """Two players' learners and the inference server (the trainable policies and the frozen
    snapshots of its cache) on the GPU; main beats the random bot as on the CPU."""
    from msagent.rundir import RunDir
    from tests.train.test_multi_discrete_runs import TWIN, _beats_random
    from tests.train.helpers import train_until
    from tests.train.test_league_runs import smallest_league

    cfg = smallest_league(tmp_path, TWIN.read_text(), "run.stop.time_s=150",
                          'services.learner.device="cuda"', 'services.inference.mode="central"',
                          'services.inference.device="cuda"', "services.evaluator.num=1",
                          "services.env_worker.num_envs=8", "league.min_games=5",
                          'services.evaluator.opponents=["bot:random"]',
                          'league.bots.random="msagent:random"')
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result = train_until(cfg, run_dir, lambda: _beats_random(run_dir), 150,
                         "main to win 90 % of 40 games from each seat against bot:random")
    assert result["env_errors"] == 0, result
    assert result["league"]["summary"]["historical"] >= 2  # snapshots served from the cache
