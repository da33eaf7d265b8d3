"""A one-step lookahead tic-tac-toe bot: win if it can, else block, else random.

It reads only the observation of PettingZoo's tictactoe_v3: ``(3, 3, 2)`` int8 where plane 0
holds the acting player's marks and plane 1 the opponent's; action ``a`` marks cell
``(a // 3, a % 3)`` of the observation.
"""

import numpy as np

SIZE = 3
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)


def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A winning cell, else a cell that blocks the opponent's win, else a random one."""
    forced = forced_move(observation, action_mask)
    return forced if forced is not None else int(_rng.choice(np.flatnonzero(action_mask)))


def forced_move(observation: np.ndarray, action_mask: np.ndarray) -> int | None:
    """The first winning cell, else the first cell that blocks the opponent's win, else None
    (then the bot moves at random)."""
    mine, theirs = observation[:, :, 0] > 0, observation[:, :, 1] > 0
    legal = np.flatnonzero(action_mask)
    for board in (mine, theirs):
        for cell in legal:
            if completes_line(board, int(cell) // SIZE, int(cell) % SIZE):
                return int(cell)
    return None


def completes_line(board: np.ndarray, row: int, col: int) -> bool:
    """Whether a mark at (row, col) completes a full line with ``board``'s marks."""
    return any(1 + _run(board, row, col, dr, dc) + _run(board, row, col, -dr, -dc) >= SIZE
               for dr, dc in DIRECTIONS)


def _run(board: np.ndarray, row: int, col: int, dr: int, dc: int) -> int:
    """How many of ``board``'s marks follow (row, col) in direction (dr, dc)."""
    count, r, c = 0, row + dr, col + dc
    while 0 <= r < SIZE and 0 <= c < SIZE and board[r, c]:
        count, r, c = count + 1, r + dr, c + dc
    return count
