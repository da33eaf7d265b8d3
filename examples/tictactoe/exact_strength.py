"""The exact strength of a tic-tac-toe run's saved player: its expected win and loss rates
against the lookahead and the perfect bot from each seat, the player taking its most likely
legal move (as the evaluator's deterministic games do) and every random choice of the bot
enumerated with its probability, so no sampling noise (50 games per seat carry a standard
error of about 3 points at a 5 % loss rate).

    python examples/tictactoe/exact_strength.py RUN_DIR [--player main] [--average K]

``--average K`` measures the mean of the player's K newest snapshots (as ``msagent evaluate
--average`` plays it). Bots are the example's own scripts; only tic-tac-toe.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "bots"))
import lookahead_bot  # noqa: E402
import perfect_bot  # noqa: E402

Board = tuple[int, ...]
"""Nine cells from the mover's side: 1 its mark, -1 the opponent's, 0 empty."""
BOTS = ("lookahead", "perfect")


def boards() -> list[Board]:
    """Every position with a move to make (both seats)."""
    seen: dict[Board, int] = {}
    perfect_bot._walk(perfect_bot.EMPTY, 0, seen)
    return list(seen)


def greedy_moves(policy: Any) -> dict[Board, int]:
    """The policy's most likely legal move in every position, in one forward pass."""
    found = boards()
    obs = np.stack([perfect_bot.observation_of(b) for b in found])
    masks = np.array([[c == 0 for c in b] for b in found])
    acted = policy.act(obs, masks, True, values=False)
    return dict(zip(found, np.asarray(acted.actions).reshape(-1).tolist()))


def bot_moves(bot: str, board: Board) -> list[tuple[float, int]]:
    """``[(probability, cell)]`` of a bot's move, by the bot script's own rules: the perfect
    bot's best moves, or the lookahead bot's forced move (win, else block), else any legal
    cell, each equally likely."""
    if bot == "perfect":
        cells = perfect_bot.best_moves(board)
    else:
        mask = np.array([c == 0 for c in board])
        forced = lookahead_bot.forced_move(perfect_bot.observation_of(board), mask)
        cells = [forced] if forced is not None else np.flatnonzero(mask).tolist()
    return [(1 / len(cells), c) for c in cells]


def outcome(moves: dict[Board, int], bot: str, seat: int) -> tuple[float, float]:
    """``(win rate, loss rate)`` of the player moving by ``moves`` from ``seat``."""

    @lru_cache(maxsize=None)
    def value(board: Board, player_to_move: bool) -> tuple[float, float]:
        if perfect_bot._lost(board):  # the side to move has lost
            return (0.0, 1.0) if player_to_move else (1.0, 0.0)
        if 0 not in board:
            return 0.0, 0.0
        if player_to_move:
            return value(perfect_bot._after(board, moves[board]), False)
        ahead = [(p, value(perfect_bot._after(board, c), True)) for p, c in bot_moves(bot, board)]
        return sum(p * w for p, (w, _) in ahead), sum(p * lost for p, (_, lost) in ahead)

    return value(perfect_bot.EMPTY, seat == 0)


def strength(policy: Any) -> dict[str, list[tuple[float, float]]]:
    """Per bot, per seat: the policy's exact ``(win rate, loss rate)``."""
    moves = greedy_moves(policy)
    return {bot: [outcome(moves, bot, seat) for seat in (0, 1)] for bot in BOTS}


def run_policy(run_dir: str, player: str, average: int) -> tuple[Any, int]:
    """The run's saved player (or the mean of its newest snapshots) and the checkpoint step."""
    from msagent.evaluate import saved_policy

    return saved_policy(run_dir, player, average)


def main(argv: list[str] | None = None, load: Callable[..., Any] = run_policy) -> None:
    """Print the exact rates of a run's player, one line per bot and seat."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir")
    parser.add_argument("--player", default="main")
    parser.add_argument("--average", type=int, default=1)
    args = parser.parse_args(argv)
    policy, step = load(args.run_dir, args.player, args.average)
    what = args.player + (f" (mean of {args.average} snapshots)" if args.average > 1 else "")
    for bot, seats in strength(policy).items():
        for seat, (win, loss) in enumerate(seats):
            print(f"{what} at checkpoint {step} vs bot:{bot} from seat {seat}: win {win:.1%}, "
                  f"loss {loss:.1%} (exact)")


if __name__ == "__main__":
    main()
