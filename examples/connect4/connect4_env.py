"""The environment script of the connect-four example: PettingZoo's connect_four_v3 (AEC)."""

from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo.classic import connect_four_v3

from msagent.envs.wrappers.base import ObservationWrapper


def make_env(landing_plane: bool = False, threat_planes: bool = False) -> Any:
    """One connect-four game (two seats, turn-based, observations with action masks).

    Args:
        landing_plane: add a plane marking where a piece dropped in each column would
            land (:class:`LandingPlane`); False: PettingZoo's two planes as they are.
        threat_planes: add two planes (after the landing plane, if any) marking the empty
            squares where a piece of the mover, then of the opponent, would complete four in
            a row (:class:`ThreatPlanes`).
    """
    game = connect_four_v3.env()
    game = LandingPlane(game) if landing_plane else game
    return ThreatPlanes(game) if threat_planes else game


def more_planes(space: gym.spaces.Box, planes: int) -> gym.spaces.Box:
    """The (rows, cols, C) board space with ``planes`` more 0/1 planes of the same dtype."""
    return gym.spaces.Box(0, 1, space.shape[:2] + (space.shape[2] + planes,), dtype=space.dtype)


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
        self.observation_space = more_planes(self.observation_space, 1)

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The board planes and the landing plane."""
        filled = (obs[:, :, 0] > 0) | (obs[:, :, 1] > 0)
        empty = ~filled
        rows = empty.shape[0] - 1 - np.argmax(empty[::-1], axis=0)  # lowest empty row per column
        plane = np.zeros(empty.shape, obs.dtype)
        open_cols = empty.any(axis=0)
        plane[rows[open_cols], np.flatnonzero(open_cols)] = 1
        return np.concatenate([obs, plane[:, :, None]], axis=2)


def _windows(rows: int = 6, cols: int = 7, line: int = 4) -> np.ndarray:
    """Every line of four squares on the board, as rows of a (windows, squares) 0/1 matrix."""
    out = []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for r in range(rows):
            for c in range(cols):
                cells = [(r + i * dr, c + i * dc) for i in range(line)]
                if all(0 <= y < rows and 0 <= x < cols for y, x in cells):
                    row = np.zeros(rows * cols, np.float32)
                    row[[y * cols + x for y, x in cells]] = 1
                    out.append(row)
    return np.stack(out)


class ThreatPlanes(ObservationWrapper):
    """Appends two planes: the empty squares where the mover's piece, then the opponent's,
    would make four in a row.

    What loses a league's main agent its games against the lookahead bot are one-move tactics
    (a threat not blocked, a win not taken, a square given on top of a threat); a small CNN
    finds them only when its two 3x3 layers happen to line the pieces up. These planes name
    the squares; the network still learns when to play them. Counted with one matrix of the 69
    lines of four (a window with three of a side's pieces and one empty square makes that
    square a threat), about 15 microseconds an observation; the planes before them are kept
    as they are, so the bots play as before.
    """

    def __init__(self, env: Any) -> None:
        """Two int8 planes more, in [0, 1]."""
        super().__init__(env)
        self.observation_space = more_planes(self.observation_space, 2)

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The planes so far, the mover's threat squares and the opponent's."""
        return np.concatenate([obs, threat_planes(obs)], axis=2)


WINDOWS = _windows()
"""The 69 lines of four of the 6x7 board, as a (69, 42) 0/1 matrix over the squares."""


def threat_planes(obs: np.ndarray) -> np.ndarray:
    """(rows, cols, 2) of ``obs``'s dtype: the empty squares where a piece of plane 0's owner,
    then of plane 1's, would complete a line of four."""
    mine, theirs = (obs[:, :, i].reshape(-1) > 0 for i in (0, 1))
    empty = ~(mine | theirs)
    free = WINDOWS @ empty
    planes = [((WINDOWS @ side == 3) & (free == 1)) @ WINDOWS > 0 for side in (mine, theirs)]
    return (np.stack(planes, axis=1) & empty[:, None]).reshape(
        obs.shape[0], obs.shape[1], 2).astype(obs.dtype)
