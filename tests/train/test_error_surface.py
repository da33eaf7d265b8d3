"""One error surface: a user's mistake gives the same error, worded the same, in local and Ray
mode; ``msagent train`` prints one line, exits 2, and keeps the traceback in ``train.log``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from msagent.errors import EnvDataError, ScriptError, UserError
from msagent.runtime import state
from msagent.train import run_training
from tests.train.helpers import EXAMPLE, example_config

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

ENV_HEADER = "import gymnasium as gym\nimport numpy as np\n"

CASES = {
    "agent without make_policy": (
        "agent", "def make_agent(observation_space, action_space, seed=None):\n    pass\n",
        ScriptError, "must define a function make_policy()"),
    "make_policy returns a dict": (
        "agent", "def make_policy(observation_space, action_space, seed=None):\n"
                 "    return {'not': 'a policy'}\n",
        ScriptError, "returned dict; it must return an msagent.policy.Policy"),
    "Dict observation space": (
        "env", ENV_HEADER + "from gymnasium.wrappers import TransformObservation\n"
               "def make_env(id='CartPole-v1'):\n"
               "    env = gym.make(id)\n"
               "    space = gym.spaces.Dict({'x': env.observation_space})\n"
               "    return TransformObservation(env, lambda o: {'x': o}, space)\n",
        ScriptError, "unsupported observation space Dict"),
    "Discrete observation space": (
        "env", ENV_HEADER + "def make_env(id='CartPole-v1'):\n    return gym.make('FrozenLake-v1')\n",
        ScriptError, "encode it one-hot"),
    "wrong-shaped observation": (
        "env", ENV_HEADER + "class Short(gym.ObservationWrapper):\n"
               "    def observation(self, obs):\n        return obs[:3]\n"
               "def make_env(id='CartPole-v1'):\n    return Short(gym.make(id))\n",
        EnvDataError, "expects shape (4,) dtype float32, got shape (3,)"),
    "NaN reward": (
        "env", ENV_HEADER + "class NanReward(gym.RewardWrapper):\n"
               "    def reward(self, r):\n        return float('nan')\n"
               "def make_env(id='CartPole-v1'):\n    return NanReward(gym.make(id))\n",
        EnvDataError, "reward = nan is not finite"),
    "inf observation after some steps": (
        "env", ENV_HEADER + "class Blows(gym.Wrapper):\n"
               "    n = 0\n"
               "    def step(self, a):\n"
               "        obs, r, term, trunc, info = self.env.step(a)\n"
               "        self.n += 1\n"
               "        if self.n == 40:\n            obs = obs.copy(); obs[1] = np.inf\n"
               "        return obs, r, term, trunc, info\n"
               "def make_env(id='CartPole-v1'):\n    return Blows(gym.make(id))\n",
        EnvDataError, "step 40"),
}


def broken_config(tmp_path: Path, mode: str, case: str):
    """The example with one user script replaced by the case's broken one."""
    which, source, _, _ = CASES[case]
    script = tmp_path / f"broken_{which}.py"
    script.write_text(source)
    return example_config(tmp_path, mode, f"scripts.{which}={json.dumps(str(script))}",
                          "run.stop.time_s=60")


def error_of(tmp_path: Path, mode: str, case: str) -> BaseException:
    """What run_training raises for the case in ``mode``."""
    with pytest.raises(UserError) as caught:
        run_training(broken_config(tmp_path, mode, case), None, False)
    return caught.value


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_user_error_in_local_and_ray_mode(ray_only: str, tmp_path: Path,
                                                   case: str) -> None:
    _, _, kind, fragment = CASES[case]
    on_ray = error_of(tmp_path, "ray", case)
    ray_backend = state.installed()
    state.attach(None)  # type: ignore[arg-type]  # let the local run start its own backend
    try:
        local = error_of(tmp_path, "local", case)
    finally:
        state.attach(ray_backend)
    assert type(on_ray) is type(local) is kind
    assert fragment in str(on_ray) and fragment in str(local)
    assert same_words(str(on_ray)) == same_words(str(local))


def same_words(message: str) -> str:
    """The message without the instance number (which worker fails first is a race)."""
    return re.sub(r"EnvWorker#\d+", "EnvWorker#N", message)


@pytest.mark.parametrize("mode", ["local", "ray"])
def test_the_cli_prints_one_line_exits_2_and_logs_the_traceback(tmp_path: Path,
                                                                mode: str) -> None:
    which, source, _, fragment = CASES["NaN reward"]
    script = tmp_path / "nan_env.py"
    script.write_text(source)
    cmd = [sys.executable, "-m", "msagent", "train", str(EXAMPLE), "--mode", mode,
           "--set", f"run.root={json.dumps(str(tmp_path / 'runs'))}",
           "--set", f"scripts.env={json.dumps(str(script))}", "--set", "logging.progress=false"]
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip() and "WARNING" not in line]
    assert len(errors) <= 3 and fragment in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    log = (run_dir / "train.log").read_text()
    assert "Traceback" in log and fragment in log
