"""CartPole whose episodes grow longer with the curriculum's level (100 steps per level): at
every reset the env asks the user service ``Curriculum`` for its level."""

from __future__ import annotations

import gymnasium as gym

from msagent import Solver


class Levels(gym.Wrapper):
    """Truncates each episode at ``100 * level`` steps, the level asked at reset."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.limit, self.steps = 100, 0

    def reset(self, **kwargs):
        self.limit = 100 * int(Solver().retrieve("Curriculum", "next_level"))
        self.steps = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        return obs, reward, terminated, truncated or self.steps >= self.limit, info


def make_env() -> gym.Env:
    """What the TOML's ``[scripts] env`` asks of this file."""
    return Levels(gym.make("CartPole-v1"))
