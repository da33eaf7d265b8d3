"""The environment script of the connect-four example: PettingZoo's connect_four_v3 (AEC)."""

from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo.classic import connect_four_v3

from msagent.envs.wrappers.base import ObservationWrapper


def make_env(landing_plane: bool = False) -> Any:
    """One connect-four game (two seats, turn-based, observations with action masks).

    Args:
        landing_plane: add a third plane marking where a piece dropped in each column would
            land (:class:`LandingPlane`); False: PettingZoo's two planes as they are.
    """
    game = connect_four_v3.env()
    return LandingPlane(game) if landing_plane else game


class LandingPlane(ObservationWrapper):
    """Appends a plane with a 1 on each column's lowest empty square.

    Whether a threat must be blocked now, or a move gives the opponent the square above, turns
    on which squares are playable; a small CNN sees only two rows around each square, so it
    cannot always tell from the two piece planes. ``(6, 7, 2)`` becomes ``(6, 7, 3)`` int8;
    planes 0 and 1 (the mover's pieces, the opponent's) are unchanged, so the bots, which read
    only those, play as before.
    """

    def __init__(self, env: Any) -> None:
        """One int8 plane more, in [0, 1]."""
        super().__init__(env)
        space = self.observation_space
        shape = space.shape[:2] + (space.shape[2] + 1,)
        self.observation_space = gym.spaces.Box(0, 1, shape, dtype=space.dtype)

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The board planes and the landing plane."""
        filled = (obs[:, :, 0] > 0) | (obs[:, :, 1] > 0)
        empty = ~filled
        rows = empty.shape[0] - 1 - np.argmax(empty[::-1], axis=0)  # lowest empty row per column
        plane = np.zeros(empty.shape, obs.dtype)
        open_cols = empty.any(axis=0)
        plane[rows[open_cols], np.flatnonzero(open_cols)] = 1
        return np.concatenate([obs, plane[:, :, None]], axis=2)
