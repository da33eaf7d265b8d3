"""A continuous policy's actions as a game is given them: its raw Gaussian samples clipped to
the Box action space's bounds. What is learnt from stays the raw sample, whose log-probability
the policy computed (as Stable-Baselines3 does, and CleanRL with ``ClipAction``)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

Bounds = tuple[np.ndarray, np.ndarray]


def box_bounds(space: Any) -> Bounds | None:
    """``(low, high)`` of a Box action space; None for any other (its actions are left alone)."""
    if isinstance(space, gym.spaces.Box):
        return space.low, space.high
    return None


def clip_actions(actions: np.ndarray, bounds: Bounds | None) -> np.ndarray:
    """A batch of actions inside ``bounds`` (unchanged when None), in the batch's dtype."""
    if bounds is None:
        return actions
    return np.clip(actions, bounds[0], bounds[1]).astype(actions.dtype, copy=False)
