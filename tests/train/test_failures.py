"""A failing service ends training with TrainingError, and no service thread outlives it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from msagent.config import TrainConfig
from msagent.runtime import state
from msagent.train import TrainingError, run_training
from tests.services.helpers import wait_until
from tests.train.helpers import example_config

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


def breaking_config(tmp_path: Path) -> TrainConfig:
    """The example in local mode where one env of one worker raises in its 4th fragment, while
    the other worker and the learner go on (and would go on forever if nobody stopped them)."""
    script = tmp_path / "breaking_env.py"
    script.write_text(BREAKING_ENV)
    return example_config(tmp_path, "local", f"scripts.env={json.dumps(str(script))}",
                          "run.stop.time_s=60")


def service_threads() -> list[str]:
    """Names of the threads that run calls of the training services."""
    return [t.name for t in threading.enumerate()
            if t.name.startswith(("fire:EnvWorker", "fire:Learner"))]


def test_a_failing_env_ends_the_run_and_its_own_backend(tmp_path: Path) -> None:
    with pytest.raises(TrainingError, match="an env worker failed: RuntimeError: the env broke"):
        run_training(breaking_config(tmp_path), None, False)
    assert state.installed() is None
    wait_until(lambda: not service_threads(), timeout_s=10, what="the service threads to end")


def test_a_failing_env_stops_only_the_runs_services(inline_only: str, tmp_path: Path) -> None:
    backend = state.installed()
    with pytest.raises(TrainingError, match="the env broke"):
        run_training(breaking_config(tmp_path), None, False)
    assert state.installed() is backend and backend.services() == []
    wait_until(lambda: not service_threads(), timeout_s=10, what="the service threads to end")
