"""A one-seat game with MultiDiscrete actions, as an env script gives it (``make_env``).

Each of ``ROUNDS`` steps shows a target, a colour (one of 3) and a size (one of 2), one-hot in
5 floats, and scores a point for each part of the answer ``MultiDiscrete([3, 2])`` that matches
it: a random answer scores 1 per step on average (1/3 + 1/2 = 5/6), the expert 2.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

NVEC = (3, 2)
ROUNDS = 16


def one_hot(targets: np.ndarray) -> np.ndarray:
    """Observations ``[N, 5]`` of targets ``[N, 2]``: the colour's and the size's one-hots."""
    obs = np.zeros((len(targets), sum(NVEC)), np.float32)
    rows = np.arange(len(targets))
    obs[rows, targets[:, 0]] = obs[rows, NVEC[0] + targets[:, 1]] = 1.0
    return obs


def draw_targets(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random targets ``[n, 2]``."""
    return np.stack([rng.integers(0, k, n) for k in NVEC], axis=1)


class TwinTarget(gym.Env):
    """The game; ``target`` is what the expert answers."""

    observation_space = gym.spaces.Box(0.0, 1.0, (sum(NVEC),), np.float32)
    action_space = gym.spaces.MultiDiscrete(NVEC)

    def reset(self, *, seed: int | None = None, options: Any = None):
        super().reset(seed=seed)
        self.t, self.target = 0, draw_targets(self.np_random, 1)[0]
        return one_hot(self.target[None])[0], {}

    def step(self, action):
        reward = float((np.asarray(action) == self.target).sum())
        self.t, self.target = self.t + 1, draw_targets(self.np_random, 1)[0]
        return one_hot(self.target[None])[0], reward, self.t >= ROUNDS, False, {}


def make_env(**_: Any) -> gym.Env:
    """The game (the ``[env]`` table's keys are ignored)."""
    return TwinTarget()
