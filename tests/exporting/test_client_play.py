"""A simulated client's episode (``msagent.client.play.play_episode``) keeps to the game's
action masks, from ``info["action_mask"]`` or from ``{"observation", "action_mask"}``
observations, and keeps the observation alone for the upload."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.client.onnx_policy import OnnxPolicy
from msagent.client.play import play_episode
from msagent.exporting.onnx_export import export_onnx
from msagent.policy import Policy


class Banned(gym.Env):
    """Two of four actions are banned each step; stepping with one is an error."""

    action_space = gym.spaces.Discrete(4)

    def __init__(self, in_obs: bool) -> None:
        self.in_obs = in_obs
        box = gym.spaces.Box(0, 1, (4,), np.float32)
        self.observation_space = gym.spaces.Dict(
            {"observation": box, "action_mask": gym.spaces.MultiBinary(4)}) if in_obs else box

    def _step_out(self) -> tuple:
        self.mask = np.zeros(4, np.int8)
        self.mask[self.np_random.choice(4, 2, replace=False)] = 1
        obs = self.np_random.random(4).astype(np.float32)
        if self.in_obs:
            return {"observation": obs, "action_mask": self.mask}, {}
        return obs, {"action_mask": self.mask}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._step_out()

    def step(self, action):
        if not self.mask[action]:
            raise AssertionError(f"illegal action {action} under {self.mask}")
        self.t += 1
        obs, info = self._step_out()
        return obs, 1.0, False, self.t >= 30, info


@pytest.mark.parametrize("in_obs", [False, True])
def test_a_client_episode_keeps_to_the_game_s_masks(in_obs: bool) -> None:
    policy = OnnxPolicy(export_onnx(Policy((4,), gym.spaces.Discrete(4), seed=0), masked=True))
    episode = play_episode(Banned(in_obs), policy, np.random.default_rng(0), seed=1)
    assert episode.rewards.sum() == 30.0 and episode.truncated
    assert episode.observations.shape == (30, 4) and episode.observations.dtype == np.float32
    assert np.isfinite(episode.log_probs).all() and (episode.log_probs <= 0).all()
