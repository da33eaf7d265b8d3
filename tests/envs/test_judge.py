"""The judge (``msagent.envs.judge``) and tic-tac-toe's perfect player: the minimax agrees
with OpenSpiel's own rules on every position, never loses to the lookahead bot, and the
judge counts the losing moves of a policy (none for the perfect player, many for an
untrained network); malformed judge scripts are refused by name."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from pettingzoo.classic import tictactoe_v3

from msagent.envs.adapters import as_multi_agent
from msagent.envs.bots import load_bot
from msagent.envs.judge import Exam, examine, load_exams
from msagent.envs.play import play_games, wdl
from msagent.errors import ScriptError
from msagent.user_scripts import build_policy, load_script

ROOT = Path(__file__).resolve().parents[2] / "examples" / "tictactoe"
PERFECT = ROOT / "bots" / "perfect_bot.py"


@pytest.fixture(scope="module")
def exams() -> dict[int, Exam]:
    """The perfect player's positions, as the evaluator loads them."""
    return load_exams(str(PERFECT))


def test_the_judge_lists_every_position_with_a_move_per_seat(exams) -> None:
    # 4,520 positions with a move to make (5,478 legal ones minus 958 finished): the first
    # player moves on boards with an even number of marks
    assert {s: len(e.masks) for s, e in exams.items()} == {0: 2423, 1: 2097}
    marks = exams[0].observations.reshape(-1, 18).sum(axis=1)
    assert set(marks.tolist()) == {0, 2, 4, 6, 8}
    # the empty board is a draw: every first move keeps it (no losing first move)
    empty = np.flatnonzero(marks == 0)
    assert exams[0].values[empty[0]].max() == 0


@pytest.mark.slow
def test_the_minimax_agrees_with_openspiel_on_every_position() -> None:
    # an independent minimax over OpenSpiel's tic_tac_toe (its own rules and returns), each
    # state's legal moves valued for the mover, compared with the perfect player's
    bot = load_script(str(PERFECT))
    game = pyspiel.load_game("tic_tac_toe")
    checked = _compare(game.new_initial_state(), bot, set())
    assert checked == 4520


def _compare(state, bot, seen: set[str]) -> int:
    """Walk OpenSpiel's states; assert the bot's move values; count the positions checked."""
    key = str(state)
    if state.is_terminal() or key in seen:
        return 0
    seen.add(key)
    mover = state.current_player()
    board = tuple(_cell(state, c, mover) for c in range(9))
    ours = bot.move_values(board)
    theirs = {a: _spiel_value(state.child(a).serialize(), mover) for a in state.legal_actions()}
    assert ours == theirs, (key, ours, theirs)
    return 1 + sum(_compare(state.child(a), bot, seen) for a in state.legal_actions())


def _cell(state, cell: int, mover: int) -> int:
    """1 the mover's mark, -1 the other's, 0 empty (OpenSpiel's board string: x o .)."""
    mark = str(state).replace("\n", "")[cell]
    return 0 if mark == "." else (1 if "xo".index(mark) == mover else -1)


@lru_cache(maxsize=None)
def _spiel_value(serialized: str, player: int) -> int:
    """The minimax return of ``player`` from a state (OpenSpiel's returns: 1, 0, -1)."""
    state = pyspiel.load_game("tic_tac_toe").deserialize_state(serialized)
    if state.is_terminal():
        return int(state.returns()[player])
    children = [_spiel_value(state.child(a).serialize(), player) for a in state.legal_actions()]
    return max(children) if state.current_player() == player else min(children)


def test_the_perfect_player_never_loses_to_the_lookahead_bot() -> None:
    bots = [load_bot(str(PERFECT)), load_bot(str(ROOT / "bots" / "lookahead_bot.py"))]
    records = play_games(lambda: as_multi_agent(tictactoe_v3.env()), bots, 100, seed=0)
    score = wdl(records, 0)
    assert score.losses == 0 and score.wins > 0, score


class ScriptPlayer:
    """A scripted bot behind the policy's ``act`` interface (what ``examine`` calls)."""

    def __init__(self, bot) -> None:
        self.bot = bot

    def act(self, observations, masks, deterministic, values=False):
        """One move per position."""
        return type("Acted", (), {"actions": np.array(
            [self.bot.act(o, m) for o, m in zip(observations, masks)])})()


def test_the_judge_finds_no_losing_move_of_the_perfect_player_and_many_of_a_weak_one(
        exams) -> None:
    perfect = examine(ScriptPlayer(load_script(str(PERFECT))), exams)
    assert perfect == {0: {"positions": 2423, "losing": 0}, 1: {"positions": 2097, "losing": 0}}
    lookahead = examine(ScriptPlayer(load_script(str(ROOT / "bots" / "lookahead_bot.py"))),
                        exams)
    untrained = examine(build_policy(str(ROOT / "tictactoe_env.py"),
                                     str(ROOT / "tictactoe_agent.py"), {}, seed=0), exams)
    for seat in (0, 1):
        # one-ply lookahead wins and blocks, but walks into forks
        assert 0 < lookahead[seat]["losing"] < 0.3 * lookahead[seat]["positions"], lookahead
        assert untrained[seat]["losing"] > lookahead[seat]["losing"], (untrained, lookahead)


def test_a_losing_move_is_one_worth_less_than_the_best_legal_one() -> None:
    exam = Exam(np.zeros((2, 1)), np.array([[True, True, False]] * 2),
                np.array([[0.0, -1.0, -np.inf], [1.0, 1.0, -np.inf]]))
    assert exam.losing(np.array([0, 0])) == 0
    assert exam.losing(np.array([1, 1])) == 1  # a draw thrown away; a tie with the best is not


def test_malformed_judge_scripts_are_refused_by_name(tmp_path: Path) -> None:
    for n, (text, says) in enumerate([("x = 1\n", "defines no positions()"),
                       ("def positions():\n    return []\n", "yielded no position"),
                       ("def positions():\n    yield (0, [0], [True, True], [1])\n",
                        "one value per action"),
                       ("def positions():\n    raise KeyError('board')\n",
                        "positions() raised KeyError")]):
        script = tmp_path / f"judge{n}.py"
        script.write_text(text)
        with pytest.raises(ScriptError, match=re.escape(says)) as caught:
            load_exams(str(script))
        assert str(script) in str(caught.value)
