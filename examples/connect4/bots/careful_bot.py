"""A careful connect-four bot: win if it can, else block, else a random column that does not
hand the opponent a win on the square above (random among all if every column does).

A training opponent for the league's main agent (``[league.roles.main] bot_opponents``): it
punishes the three blunders that lose a main agent its games against the one-step lookahead
bot (a threat not blocked, a win not taken, a winning square given on top). It is the
lookahead bot's two rules plus a third, so it is the stronger of the two; the evaluator
measures the main agent against the lookahead bot, which the main agent never plays in training.
"""

import importlib.util
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location("_connect4_careful_lookahead",
                                               Path(__file__).with_name("lookahead_bot.py"))
_lookahead = importlib.util.module_from_spec(_spec)  # a module of its own: its own RNG
_spec.loader.exec_module(_lookahead)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    _lookahead.seed(n)


def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A winning column, else a blocking one, else a random safe one."""
    mine, theirs, filled, legal = split(observation, action_mask)
    forced = forced_move(mine, theirs, filled, legal)
    return forced if forced is not None else choice(safe_columns(theirs, filled, legal))


def split(observation: np.ndarray,
          action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """The mover's pieces, the opponent's, the filled squares and the legal columns."""
    mine, theirs = observation[:, :, 0] > 0, observation[:, :, 1] > 0
    return mine, theirs, mine | theirs, [int(c) for c in np.flatnonzero(action_mask)]


def forced_move(mine: np.ndarray, theirs: np.ndarray, filled: np.ndarray,
                legal: list[int]) -> int | None:
    """A column that wins, else one that blocks the opponent's win, else None."""
    for board in (mine, theirs):
        for col in legal:
            if _lookahead.completes_line(board, _lookahead.landing_row(filled, col), col):
                return col
    return None


def safe_columns(theirs: np.ndarray, filled: np.ndarray, legal: list[int]) -> list[int]:
    """The legal columns that give no win on the square above (all of them if none is safe)."""
    return [col for col in legal if not gives_win_above(theirs, filled, col)] or legal


def choice(columns: list[int]) -> int:
    """One of ``columns`` at random, with this bot's own random numbers."""
    return int(_lookahead._rng.choice(columns))


def gives_win_above(theirs: np.ndarray, filled: np.ndarray, col: int) -> bool:
    """Whether dropping a piece in ``col`` lets the opponent win on the square above it."""
    row = _lookahead.landing_row(filled, col)
    return row > 0 and _lookahead.completes_line(theirs, row - 1, col)
