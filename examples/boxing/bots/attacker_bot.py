"""A boxing bot that attacks, as the game's own computer boxer does: it finds both boxers on
the screen, walks to the opponent's side, lines up with it and punches.

A league's main agent learns little from games against the random bot at first: neither
boxer comes near the other, so a punch rarely lands and the rewards are almost all zero.
Against this bot punches land from the first game, both ways, the dense signal that
single-player Boxing's computer boxer gives (``examples/boxing_league.toml`` sets it as the
main agent's bot opponent).

It reads only the newest grayscale frame of ``boxing_env.make_env``'s observation (plane 3 of
the stack), where every seat sees itself as the white boxer (``own_colour``): its own pixels
are the brightest in the ring, the opponent's the darkest.
"""

from __future__ import annotations

import numpy as np

NEWEST = 3
"""The plane of the newest frame in the (84, 84, 5) observation."""

RING_ROWS, RING_COLS = slice(8, 80), slice(6, 84)
"""The ring on the 84x84 frame, without the scores above it and the black border at left."""

WHITE_ABOVE, BLACK_BELOW = 180, 40
"""Grayscale levels of this seat's boxer, seen white (above), and the opponent's (below)."""

REACH = 8
"""Horizontal distance (84x84 pixels) at which a straight punch lands."""

OFFSET = 8
"""Rows between the boxers' centres at which one's glove meets the other's head."""

ALIGN = 2
"""Rows off ``OFFSET`` that still count as lined up for a punch."""

# Action ids of Atari's full action set (boxing_v2 uses all 18).
FIRE = 1
_MOVES = {(0, 0): 0, (-1, 0): 2, (0, 1): 3, (0, -1): 4, (1, 0): 5, (-1, 1): 6, (-1, -1): 7,
          (1, 1): 8, (1, -1): 9}
_FIRES = {(0, 0): 1, (-1, 0): 10, (0, 1): 11, (0, -1): 12, (1, 0): 13, (-1, 1): 14,
          (-1, -1): 15, (1, 1): 16, (1, -1): 17}


def act(observation: np.ndarray, action_mask: np.ndarray | None) -> int:
    """Close in on the opponent and punch once lined up within reach."""
    frame = observation[RING_ROWS, RING_COLS, NEWEST]
    me, them = _centre(frame > WHITE_ABOVE), _centre(frame < BLACK_BELOW)
    if me is None or them is None:
        return FIRE
    return _action(them[0] - me[0], them[1] - me[1])


def _centre(pixels: np.ndarray) -> tuple[float, float] | None:
    """The (row, column) centre of a boxer's pixels, or None where none are seen."""
    rows, cols = np.nonzero(pixels)
    return (float(rows.mean()), float(cols.mean())) if len(rows) else None


def _action(d_row: float, d_col: float) -> int:
    """The move (or punch) that brings the opponent level and within reach."""
    off = d_row - OFFSET if d_row >= 0 else d_row + OFFSET
    vertical = 0 if abs(off) <= ALIGN else int(np.sign(off))
    horizontal = int(np.sign(d_col)) if abs(d_col) > REACH else 0
    if abs(off) <= 2 * ALIGN and abs(d_col) <= REACH + 4:
        return _FIRES[(vertical, horizontal)]
    return _MOVES[(vertical, horizontal)]
