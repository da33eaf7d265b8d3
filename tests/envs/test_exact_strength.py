"""The tic-tac-toe example's exact strength measure (``examples/tictactoe/exact_strength.py``)
agrees with games played by the bot scripts themselves, and finds no loss for a perfect player."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from msagent.user_scripts import load_script

ROOT = Path(__file__).resolve().parents[2] / "examples" / "tictactoe"
exact = load_script(str(ROOT / "exact_strength.py"))
perfect = load_script(str(ROOT / "bots" / "perfect_bot.py"))
lookahead = load_script(str(ROOT / "bots" / "lookahead_bot.py"))


class FirstLegal:
    """A deterministic player with holes: the first legal cell, or a win when it has one."""

    def act(self, obs, masks, greedy, values=False):
        """One move per position."""
        moves = []
        for planes, mask in zip(obs, masks):
            board = perfect.board_of(planes)
            wins = [c for c, v in perfect.move_values(board).items() if v == 1 and
                    perfect._lost(perfect._after(board, c))]
            moves.append(wins[0] if wins else int(np.flatnonzero(mask)[0]))
        return SimpleNamespace(actions=np.array(moves))


class Perfect:
    """A deterministic perfect player: the first cell of the best value."""

    def act(self, obs, masks, greedy, values=False):
        """One move per position."""
        out = []
        for planes in obs:
            found = perfect.move_values(perfect.board_of(planes))
            out.append(min(c for c, v in found.items() if v == max(found.values())))
        return SimpleNamespace(actions=np.array(out))


def _played(policy, bot, seat: int, games: int) -> tuple[float, float]:
    """Win and loss rates over ``games`` games against the bot script itself."""
    moves, wins, losses = exact.greedy_moves(policy), 0, 0
    bot.seed(seat)
    for _ in range(games):
        board, mine = perfect.EMPTY, seat == 0
        while not perfect._lost(board) and 0 in board:
            cell = moves[board] if mine else bot.act(perfect.observation_of(board),
                                                     np.array([c == 0 for c in board]))
            board, mine = perfect._after(board, cell), not mine
        if perfect._lost(board):
            wins, losses = wins + (not mine), losses + mine
    return wins / games, losses / games


@pytest.mark.parametrize("seat", [0, 1])
@pytest.mark.parametrize("bot", ["lookahead", "perfect"])
def test_the_exact_rates_agree_with_the_bots_own_games(bot: str, seat: int) -> None:
    found = exact.strength(FirstLegal())[bot][seat]
    played = _played(FirstLegal(), lookahead if bot == "lookahead" else perfect, seat, 3000)
    assert found[1] > 0.2  # the first legal cell loses often
    # 3,000 games: a standard error under 1 point; 3 points is over 3 of them
    assert played == pytest.approx(found, abs=0.03), (played, found)


def test_a_perfect_player_never_loses_and_the_command_prints_every_row(capsys) -> None:
    rates = exact.strength(Perfect())
    assert all(loss == 0.0 for seats in rates.values() for _, loss in seats), rates
    exact.main(["RUN"], load=lambda run, player, average: (Perfect(), 7))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[3] == ("main at checkpoint 7 vs bot:perfect from seat 1: "
                                            "win 0.0%, loss 0.0% (exact)"), lines
