"""Frame stacking: each seat sees its last k observations at once, so a policy without memory
can tell where things move (a single Atari frame shows no velocity)."""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.wrappers.base import ObservationWrapper, box_space, positive


class FrameStack(ObservationWrapper):
    """Per seat, the last ``k`` observations concatenated along the last axis, oldest first.

    An observation of shape ``(..., C)`` becomes ``(..., C * k)`` of the same dtype; a seat's
    stack starts each game filled with copies of its first observation, and moves on only when
    the seat receives an observation (its own turns in a turn-based game). A truncated game's
    ``final_obs`` is stacked onto the seat's frames like any other observation, so a learner
    bootstraps from the same kind of input it acts on.

    Args:
        env: a game with Box observations (images ``(H, W, C)``, or vectors).
        k: frames per stack.
    """

    seat_independent = False

    def __init__(self, env: Any, k: int = 4) -> None:
        """Check the space; the observation space's last axis grows k times."""
        super().__init__(env)
        self.k = positive(k, "k", "FrameStack")
        space = box_space(self.observation_space, "FrameStack", self.label)
        reps = (1,) * (len(space.shape) - 1) + (self.k,)
        self.observation_space = gym.spaces.Box(np.tile(space.low, reps),
                                                np.tile(space.high, reps), dtype=space.dtype)
        self._stacks: dict[int, deque[np.ndarray]] = {}

    def start(self) -> None:
        """Forget every seat's frames: the next game starts its own stacks."""
        self._stacks = {}

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """Push ``obs`` onto the seat's frames; the k frames as one new array, oldest first."""
        obs = np.asarray(obs)
        frames = self._stacks.get(seat)
        if frames is None:
            frames = self._stacks[seat] = deque([obs] * self.k, maxlen=self.k)
        else:
            frames.append(obs)
        return np.concatenate(frames, axis=-1)
