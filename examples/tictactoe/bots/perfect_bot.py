"""A perfect tic-tac-toe player, and the judge of the tic-tac-toe league: a minimax over the
whole game (5,478 positions, memoized).

As a bot (``act``) it takes a move of the best value at random: it never loses, and against it
a draw is the best result. As a judge (``positions``) it lists every position with a move to
make, and the value of each move in it, so the evaluator can count how often a policy's own
choice throws a draw or a win away. The league never trains against it: the example names it
among ``[league.bots]`` (which the main agent plays only if its role's ``bots`` weight says so,
0 by default) and as ``[services.evaluator] judge``.

It reads only the observation of PettingZoo's tictactoe_v3: ``(3, 3, 2)`` int8 where plane 0
holds the acting player's marks and plane 1 the opponent's; action ``a`` marks cell
``(a // 3, a % 3)``.
"""

from functools import lru_cache

import numpy as np

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
EMPTY = (0,) * 9
_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)


def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A legal cell of the best minimax value for the player to move (random among ties)."""
    return int(_rng.choice(best_moves(board_of(observation))))


def best_moves(board: tuple[int, ...]) -> list[int]:
    """The legal cells of the best minimax value for the mover (the bot picks one at random)."""
    values = move_values(board)
    best = max(values.values())
    return [cell for cell, v in values.items() if v == best]


def positions():
    """The judge's positions: (seat, observation, action_mask, move_values) of every position
    reachable from the empty board with a move to make (seat 0 moves when the number of marks
    is even; 2,423 and 2,097 positions)."""
    seen: dict[tuple[int, ...], int] = {}
    _walk(EMPTY, 0, seen)
    for board, seat in seen.items():
        values = move_values(board)
        yield (seat, observation_of(board), np.array([c == 0 for c in board]),
               [values.get(cell, -2) for cell in range(9)])


def board_of(observation: np.ndarray) -> tuple[int, ...]:
    """The board as 9 cells from the mover's side: 1 its mark, -1 the opponent's, 0 empty."""
    planes = np.asarray(observation).reshape(9, 2)
    return tuple(int(m) - int(t) for m, t in planes)


def observation_of(board: tuple[int, ...]) -> np.ndarray:
    """The mover's observation of a board (the inverse of :func:`board_of`)."""
    planes = np.zeros((9, 2), np.int8)
    planes[[c for c in range(9) if board[c] == 1], 0] = 1
    planes[[c for c in range(9) if board[c] == -1], 1] = 1
    return planes.reshape(3, 3, 2)


def move_values(board: tuple[int, ...]) -> dict[int, int]:
    """Each legal cell's minimax value for the mover: 1 win, 0 draw, -1 loss."""
    return {cell: -value(_after(board, cell)) for cell in range(9) if board[cell] == 0}


@lru_cache(maxsize=None)
def value(board: tuple[int, ...]) -> int:
    """The minimax value of a position for the player to move (whose marks are 1)."""
    if _lost(board):
        return -1
    if 0 not in board:
        return 0
    return max(move_values(board).values())


def _lost(board: tuple[int, ...]) -> bool:
    """Whether the opponent's marks (-1) complete a line."""
    return any(all(board[i] == -1 for i in line) for line in LINES)


def _after(board: tuple[int, ...], cell: int) -> tuple[int, ...]:
    """The position after the mover marks ``cell``, seen from the other player's side."""
    marked = list(board)
    marked[cell] = 1
    return tuple(-x for x in marked)


def _walk(board: tuple[int, ...], seat: int, seen: dict[tuple[int, ...], int]) -> None:
    """Every position reachable from ``board`` with a move left, and whose move it is."""
    if board in seen or 0 not in board or _lost(board):
        return
    seen[board] = seat
    for cell in range(9):
        if board[cell] == 0:
            _walk(_after(board, cell), 1 - seat, seen)
