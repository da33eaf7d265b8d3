"""Scripted bots: loading, refusals, and the example bots' one-step lookahead."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, tictactoe_v3

from msagent.envs.adapters import as_multi_agent
from msagent.envs.bots import RandomBot, load_bot, load_bots
from msagent.envs.play import play_games, wdl
from msagent.errors import IllegalActionError, ScriptError
from msagent.vocabulary import BUILTIN_RANDOM

ROOT = Path(__file__).resolve().parents[2] / "examples"
C4 = ROOT / "connect4" / "bots"
TTT = ROOT / "tictactoe" / "bots"
ALL = np.ones(7, dtype=bool)


def board(mine: list[tuple[int, int]], theirs: list[tuple[int, int]], shape=(6, 7)) -> np.ndarray:
    """An observation with the mover's pieces in plane 0 and the opponent's in plane 1."""
    obs = np.zeros((*shape, 2), dtype=np.int8)
    for plane, cells in enumerate((mine, theirs)):
        for row, col in cells:
            obs[row, col, plane] = 1
    return obs


def test_lookahead_takes_an_immediate_win_before_blocking() -> None:
    bot = load_bot(str(C4 / "lookahead_bot.py"))
    obs = board(mine=[(5, 0), (5, 1), (5, 2)], theirs=[(4, 0), (4, 1), (4, 2), (5, 6)])
    assert bot.act_batch([obs], [ALL]).tolist() == [3]


def test_lookahead_blocks_a_vertical_and_a_diagonal_threat() -> None:
    bot = load_bot(str(C4 / "lookahead_bot.py"))
    vertical = board(mine=[(5, 0), (5, 1)], theirs=[(5, 4), (4, 4), (3, 4)])
    assert bot.act_batch([vertical], [ALL]).tolist() == [4]
    # opponent holds (5,0), (4,1), (3,2); (2, 3) completes the diagonal
    diagonal = board(mine=[(5, 1), (5, 2), (4, 2), (4, 3), (3, 3), (5, 6)],
                     theirs=[(5, 0), (4, 1), (3, 2), (5, 3), (5, 5)])
    assert bot.act_batch([diagonal], [ALL]).tolist() == [3]


def test_greedy_bot_wins_when_it_can_but_never_blocks() -> None:
    bot = load_bot(str(C4 / "greedy_bot.py"))
    win = board(mine=[(5, 0), (5, 1), (5, 2)], theirs=[(4, 0), (4, 1), (4, 2), (5, 6)])
    assert bot.act_batch([win], [ALL]).tolist() == [3]
    threat = board(mine=[(5, 0), (5, 1)], theirs=[(5, 4), (4, 4), (3, 4)])
    moves = {bot.act_batch([threat], [ALL])[0] for _ in range(60)}
    assert len(moves) >= 5  # random among the legal columns, not only the block at 4


def test_lookahead_beats_the_greedy_bot_in_connect_four() -> None:
    bots = [load_bot(str(C4 / "lookahead_bot.py")), load_bot(str(C4 / "greedy_bot.py"))]
    records = play_games(lambda: as_multi_agent(connect_four_v3.env()), bots, 200, seed=0)
    score = wdl(records, 0)
    assert score.win_rate >= 0.6, score


def test_careful_bot_never_gives_a_winning_square_on_top() -> None:
    bot = load_bot(str(C4 / "careful_bot.py"))
    # the opponent has three on row 4 (columns 0-2); column 3 is empty, so a piece there lands
    # on row 5 and gives them (4, 3); every other column is safe, and nobody can win at once
    trap = board(mine=[(5, 0), (5, 2)], theirs=[(5, 1), (4, 0), (4, 1), (4, 2)])
    moves = {int(bot.act_batch([trap], [ALL])[0]) for _ in range(80)}
    assert 3 not in moves and len(moves) >= 4, moves


def test_careful_bot_beats_the_lookahead_bot_in_connect_four() -> None:
    bots = [load_bot(str(C4 / "careful_bot.py")), load_bot(str(C4 / "lookahead_bot.py"))]
    records = play_games(lambda: as_multi_agent(connect_four_v3.env()), bots, 200, seed=0)
    score = wdl(records, 0)
    assert score.win_rate >= 0.6, score


def test_threat_bot_makes_the_move_with_the_most_threats() -> None:
    bot = load_bot(str(C4 / "threat_bot.py"))
    # column 3 makes three in a row on the bottom row with both ends open (two threats),
    # column 0 only one (its other end, square (5, 3)); no one can win or must block
    open_two = board(mine=[(5, 1), (5, 2)], theirs=[(4, 1), (4, 2), (5, 6)])
    assert {int(bot.act_batch([open_two], [ALL])[0]) for _ in range(40)} == {3}


def test_threat_bot_keeps_the_careful_rules() -> None:
    bot = load_bot(str(C4 / "threat_bot.py"))
    trap = board(mine=[(5, 0), (5, 2)], theirs=[(5, 1), (4, 0), (4, 1), (4, 2)])
    assert 3 not in {int(bot.act_batch([trap], [ALL])[0]) for _ in range(40)}
    block = board(mine=[(5, 0), (5, 1)], theirs=[(5, 4), (4, 4), (3, 4)])
    assert bot.act_batch([block], [ALL]).tolist() == [4]


@pytest.mark.slow
@pytest.mark.parametrize("other, least", [("lookahead", 0.75), ("careful", 0.6)])
def test_threat_bot_beats_the_lookahead_and_the_careful_bot(other: str, least: float) -> None:
    bots = [load_bot(str(C4 / "threat_bot.py")), load_bot(str(C4 / f"{other}_bot.py"))]
    records = play_games(lambda: as_multi_agent(connect_four_v3.env()), bots, 200, seed=0)
    score = wdl(records, 0)
    assert score.win_rate >= least, score


def test_tictactoe_lookahead_wins_then_blocks() -> None:
    bot = load_bot(str(TTT / "lookahead_bot.py"))
    mask = np.ones(9, dtype=bool)
    win = board(mine=[(0, 0), (1, 1)], theirs=[(0, 1), (0, 2)], shape=(3, 3))
    mask[[0, 4, 1, 2]] = False
    assert bot.act_batch([win], [mask]).tolist() == [8]
    block = board(mine=[(0, 0)], theirs=[(1, 0), (1, 1)], shape=(3, 3))
    mask = np.ones(9, dtype=bool)
    mask[[0, 3, 4]] = False
    assert bot.act_batch([block], [mask]).tolist() == [5]


def test_lookahead_beats_random_in_connect_four() -> None:
    bots = [load_bot(str(C4 / "lookahead_bot.py")), load_bot(str(C4 / "random_bot.py"))]
    records = play_games(lambda: as_multi_agent(connect_four_v3.env()), bots, 200, seed=0)
    score = wdl(records, 0)
    assert score.games == 200 and score.win_rate >= 0.8, score
    assert [s.games for s in score.by_seat] == [100, 100]


def test_lookahead_beats_random_in_tictactoe() -> None:
    bots = [load_bot(str(TTT / "lookahead_bot.py")), load_bot(str(TTT / "random_bot.py"))]
    records = play_games(lambda: as_multi_agent(tictactoe_v3.env()), bots, 100, seed=0)
    assert wdl(records, 0).losses < wdl(records, 0).wins / 4


def test_random_bot_is_seeded_and_legal() -> None:
    module_bot = load_bot(str(C4 / "random_bot.py"))
    from msagent.user_scripts import load_script

    mask = np.array([0, 1, 0, 1, 1, 0, 0], dtype=bool)
    load_script(str(C4 / "random_bot.py")).seed(5)
    first = module_bot.act_batch([np.zeros((6, 7, 2))] * 20, [mask] * 20)
    load_script(str(C4 / "random_bot.py")).seed(5)
    assert np.array_equal(first, module_bot.act_batch([np.zeros((6, 7, 2))] * 20, [mask] * 20))
    assert set(first.tolist()) == {1, 3, 4}


def test_script_without_act_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "no_act.py"
    script.write_text("def play(obs, mask):\n    return 0\n")
    with pytest.raises(ScriptError, match="must define a function act"):
        load_bot(str(script))


def test_illegal_or_odd_actions_name_the_bot(tmp_path: Path) -> None:
    script = tmp_path / "stubborn.py"
    script.write_text("def act(obs, mask):\n    return 2 if mask is not None else 'left'\n")
    bot = load_bot(str(script))
    mask = np.array([1, 1, 0], dtype=bool)
    with pytest.raises(IllegalActionError, match=r"bot stubborn chose action 2.*\[0, 1\]"):
        bot.act_batch([np.zeros(3)], [mask])
    with pytest.raises(ScriptError, match="bot stubborn: act\\(\\) returned 'left'"):
        bot.act_batch([np.zeros(3)], None)


def test_the_built_in_random_bot_plays_legal_actions_and_repeats_with_its_seed() -> None:
    masks = np.array([[False, True, False, True], [True, False, False, False]])
    bot = RandomBot(gym.spaces.Discrete(4), seed=3)
    picks = np.stack([bot(np.zeros((2, 5)), masks) for _ in range(50)])
    assert picks.dtype == np.int64 and set(picks[:, 0]) == {1, 3} and set(picks[:, 1]) == {0}
    again = RandomBot(gym.spaces.Discrete(4), seed=3)
    assert (np.stack([again(np.zeros((2, 5)), masks) for _ in range(50)]) == picks).all()
    assert set(RandomBot(gym.spaces.Discrete(3), seed=0)(np.zeros((60, 1)), None)) == {0, 1, 2}


def test_the_built_in_random_bot_samples_box_actions_within_bounds() -> None:
    space = gym.spaces.Box(np.array([-1.0, 0.0]), np.array([1.0, 5.0]), dtype=np.float32)
    actions = RandomBot(space, seed=0)(np.zeros((40, 3)), None)
    assert actions.shape == (40, 2) and actions.dtype == np.float32
    assert all(space.contains(a) for a in actions) and len(np.unique(actions[:, 1])) == 40


def test_league_bots_build_the_built_in_random_bot_asking_the_game_once(tmp_path: Path) -> None:
    asked: list[int] = []

    def space() -> gym.Space:
        asked.append(1)
        return gym.spaces.Discrete(3)

    bots = load_bots({"r1": BUILTIN_RANDOM, "r2": BUILTIN_RANDOM,
                      "look": str(TTT / "lookahead_bot.py")}, space, seed=0)
    assert isinstance(bots["r1"], RandomBot) and isinstance(bots["r2"], RandomBot)
    assert bots["look"].name == "look" and asked == [1]  # a script bot keeps its entry name
    assert set(bots["r1"].act_batch(np.zeros((30, 2)), None)) == {0, 1, 2}
    assert load_bots({"look": str(TTT / "lookahead_bot.py")}, space) and asked == [1]
