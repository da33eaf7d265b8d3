"""A game whose env raises is dropped and its env rebuilt; a failing env worker is replaced
(within limits); a crash loop or a disabled restart ends the run with the env's own error, and
no service thread outlives the run."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from msagent.config import TrainConfig
from msagent.errors import RemoteError, ServiceDiedError
from msagent.runtime import state
from msagent.train import run_training
from tests.services.helpers import wait_until
from tests.train.helpers import example_config

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

BREAKING_ENV = '''
import gymnasium as gym


class Breaks(gym.Wrapper):
    """CartPole that raises in its 101st step if it was first reset with seed 1000."""

    def __init__(self, env):
        super().__init__(env)
        self.doomed, self.steps = False, 0

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self.doomed = seed == 1000  # env 0 of env worker 0, whose seed is run.seed + 1000
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        self.steps += 1
        if self.doomed and self.steps > 100:
            raise RuntimeError("the env broke")
        return self.env.step(action)


def make_env(id="CartPole-v1"):
    return Breaks(gym.make(id))
'''

CRASH_LOOPING_ENV = '''
import gymnasium as gym


class AlwaysBreaks(gym.Wrapper):
    def step(self, action):
        raise RuntimeError("broken on every step")


def make_env(id="CartPole-v1"):
    return AlwaysBreaks(gym.make(id))
'''


def config_with_env(tmp_path: Path, source: str, *overrides: str) -> TrainConfig:
    """The example in local mode with the given env script."""
    script = tmp_path / "env_script.py"
    script.write_text(source)
    return example_config(tmp_path, "local", f"scripts.env={json.dumps(str(script))}",
                          "run.stop.mean_return=0", *overrides)


def service_threads() -> list[str]:
    """Names of the threads that run calls of the training services."""
    return [t.name for t in threading.enumerate()
            if t.name.startswith(("fire:EnvWorker", "fire:Learner"))]


def test_a_game_whose_env_raises_is_dropped_and_its_env_rebuilt_in_the_same_worker(
        tmp_path: Path) -> None:
    cfg = config_with_env(tmp_path, BREAKING_ENV, "run.stop.env_steps=40000",
                          "run.stop.time_s=60")
    result = run_training(cfg, None, False)
    assert result["stop_reason"].startswith("env_steps"), result
    assert result["env_errors"] == 1 and result["replacements"] == []
    assert result["fragments_lost"] == 0


def test_a_failing_env_worker_is_replaced_and_the_run_goes_on(tmp_path: Path) -> None:
    cfg = config_with_env(tmp_path, BREAKING_ENV, "run.stop.env_steps=40000",
                          "run.stop.time_s=60", "services.env_worker.restart_failed_envs=false")
    result = run_training(cfg, None, False)
    assert result["stop_reason"].startswith("env_steps"), result
    (replaced,) = result["replacements"]
    assert replaced["dead"] == "EnvWorker#0" and replaced["new"] == "EnvWorker#2"
    assert "RuntimeError: the env broke" in replaced["cause"]
    assert replaced["back_s"] is not None and replaced["back_s"] < 30
    assert result["fragments_lost"] == cfg.services.env_worker.num_envs
    wait_until(lambda: not service_threads(), timeout_s=10, what="the service threads to end")


def test_without_restarts_a_failing_env_ends_the_run_and_its_own_backend(tmp_path: Path) -> None:
    cfg = config_with_env(tmp_path, BREAKING_ENV, "run.stop.time_s=60",
                          "services.env_worker.max_restarts=0",
                          "services.env_worker.restart_failed_envs=false")
    with pytest.raises(RemoteError,
                       match="env worker EnvWorker#0 failed: RuntimeError: the env broke"):
        run_training(cfg, None, False)
    assert state.installed() is None
    wait_until(lambda: not service_threads(), timeout_s=10, what="the service threads to end")


def test_a_crash_looping_env_script_stops_the_run(inline_only: str, tmp_path: Path) -> None:
    backend = state.installed()
    cfg = config_with_env(tmp_path, CRASH_LOOPING_ENV, "run.stop.time_s=60")
    with pytest.raises(ServiceDiedError, match="crash-looping") as caught:
        run_training(cfg, None, False)
    assert "RuntimeError: broken on every step" in str(caught.value)
    assert state.installed() is backend and backend.services() == []
    wait_until(lambda: not service_threads(), timeout_s=10, what="the service threads to end")
