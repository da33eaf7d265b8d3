"""A one-seat Gymnasium env whose observations are ``{"observation", "action_mask"}`` maps
(RLlib's and PettingZoo's convention) trains: the policy is built for ``"observation"`` and
acts within the mask."""

from __future__ import annotations

import pytest
from pathlib import Path

from msagent.train import run_training
from tests.train.helpers import one_seat_config

MASKED = '''
"""Show a target (one of 4) one-hot; two other actions are banned each step. 1 for the
target, 20 steps: random legal play earns 20 / 2 = 10 a game, a perfect policy 20."""
import gymnasium as gym
import numpy as np


class MaskedDict(gym.Env):
    observation_space = gym.spaces.Dict({
        "observation": gym.spaces.Box(0, 1, (4,), np.float32),
        "action_mask": gym.spaces.MultiBinary(4)})
    action_space = gym.spaces.Discrete(4)

    def _obs(self):
        self.target = int(self.np_random.integers(4))
        obs, mask = np.zeros(4, np.float32), np.ones(4, np.int8)
        obs[self.target] = 1.0
        others = [a for a in range(4) if a != self.target]
        mask[self.np_random.choice(others, 2, replace=False)] = 0
        self.mask = mask
        return {"observation": obs, "action_mask": mask}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        assert self.mask[action], (action, self.mask)  # the adapter refuses illegal ones first
        self.t += 1
        reward = float(action == self.target)
        return self._obs(), reward, False, self.t >= 20, {}


def make_env():
    return MaskedDict()
'''


@pytest.mark.slow
def test_a_dict_observation_with_its_action_mask_trains(tmp_path: Path) -> None:
    result = run_training(one_seat_config(tmp_path, MASKED, 19), None, False)
    assert result["stop_reason"].startswith("mean_return"), result  # random legal play: 10
    assert result["env_errors"] == 0
