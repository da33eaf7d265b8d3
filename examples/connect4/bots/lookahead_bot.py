"""A one-step lookahead connect-four bot: win if it can, else block, else random.

It reads only the observation of PettingZoo's connect_four_v3: ``(6, 7, 2)`` int8 where plane
0 holds the acting player's pieces and plane 1 the opponent's, row 0 at the top; a piece
dropped into a column lands on the lowest empty row.
"""

import numpy as np

ROWS, COLS, LINE = 6, 7, 4
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)


def act(observation: np.ndarray, action_mask: np.ndarray, block: bool = True) -> int:
    """A winning column, else (``block``) a column that blocks the opponent's win, else a
    random one."""
    mine, theirs = observation[:, :, 0] > 0, observation[:, :, 1] > 0
    filled = mine | theirs
    legal = np.flatnonzero(action_mask)
    for board in (mine, theirs) if block else (mine,):
        for col in legal:
            if completes_line(board, landing_row(filled, col), col):
                return int(col)
    return int(_rng.choice(legal))


def landing_row(filled: np.ndarray, col: int) -> int:
    """The lowest empty row of a column (the column must have one)."""
    return int(np.flatnonzero(~filled[:, col])[-1])


def completes_line(board: np.ndarray, row: int, col: int) -> bool:
    """Whether a piece at (row, col) makes LINE in a row with ``board``'s pieces."""
    return any(1 + _run(board, row, col, dr, dc) + _run(board, row, col, -dr, -dc) >= LINE
               for dr, dc in DIRECTIONS)


def _run(board: np.ndarray, row: int, col: int, dr: int, dc: int) -> int:
    """How many of ``board``'s pieces follow (row, col) in direction (dr, dc)."""
    count, r, c = 0, row + dr, col + dc
    while 0 <= r < ROWS and 0 <= c < COLS and board[r, c]:
        count, r, c = count + 1, r + dr, c + dc
    return count
