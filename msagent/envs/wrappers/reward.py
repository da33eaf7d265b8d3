"""Reward clipping: each seat's reward becomes its sign, so games that score in different units
(1 or 2 points a punch, hundreds a brick) train with the same step sizes; the Atari PPO and DQN
baselines train on ``sign(r)`` and report the game's own score."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from msagent.envs.multi_agent import Turn, points
from msagent.envs.wrappers.base import Wrapper


class ClipReward(Wrapper):
    """Every turn's rewards as their signs (-1, 0 or +1 per seat).

    Put it outside ``FrameSkip`` to clip each decision's summed reward, as the baselines do.
    The game's own points travel on in ``Turn.score``, so logged returns, wins and losses stay
    the game's (as the baselines log the score, not the clipped sum).

    Args:
        env: any game speaking the protocol.
    """

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game; its first turn with clipped rewards."""
        return _clipped(self.env.reset(seed=seed))

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the seats' actions; the next turn with clipped rewards."""
        return _clipped(self.env.step(actions))


def _clipped(turn: Turn) -> Turn:
    """The turn with each seat's reward replaced by its sign, its points kept as the score."""
    rewards = np.asarray(turn.rewards, dtype=float)
    return dataclasses.replace(turn, rewards=np.sign(rewards), score=points(turn))
