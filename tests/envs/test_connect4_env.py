"""The Connect Four example's env script: the landing and threat planes beside PettingZoo's two
planes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from msagent.envs.adapters import as_multi_agent
from msagent.envs.checks import ObsChecker
from msagent.user_scripts import build_policy, load_script

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "connect4"
connect4_env = load_script(str(EXAMPLE / "connect4_env.py"))


lookahead = load_script(str(EXAMPLE / "bots" / "lookahead_bot.py"))


def lockstep_games(seed: int, **planes: bool):
    """The same random game without and with the extra planes (default: the landing plane);
    pairs of observations."""
    rng = np.random.default_rng(seed)
    plain = as_multi_agent(connect4_env.make_env())
    landing = connect4_env.make_env(**(planes or {"landing_plane": True}))
    a, b = plain.reset(seed=seed), landing.reset(seed=seed)
    pairs = []
    while not a.done:
        seat = a.to_act[0]
        pairs.append((a.obs[seat], b.obs[seat]))
        move = int(rng.choice(np.flatnonzero(a.masks[seat])))
        a, b = plain.step({seat: move}), landing.step({seat: move})
    return pairs


def lowest_empty(board: np.ndarray) -> np.ndarray:
    """Where a piece would land in each column, worked out square by square."""
    plane = np.zeros(board.shape[:2], np.int8)
    for col in range(board.shape[1]):
        empty = [row for row in range(board.shape[0]) if not board[row, col].any()]
        if empty:
            plane[max(empty), col] = 1
    return plane


def test_the_landing_plane_marks_each_columns_lowest_empty_square() -> None:
    landing = connect4_env.make_env(landing_plane=True)
    checker = ObsChecker(landing.observation_space, "connect4 landing")
    for seed in range(3):
        pairs = lockstep_games(seed)
        assert len(pairs) >= 7
        for step, (plain, with_plane) in enumerate(pairs):
            assert with_plane.shape == (6, 7, 3) and with_plane.dtype == np.int8
            checker.check_obs(with_plane[None], step)  # within the declared space
            np.testing.assert_array_equal(with_plane[:, :, :2], plain)
            np.testing.assert_array_equal(with_plane[:, :, 2], lowest_empty(plain))


def threat_squares(board: np.ndarray) -> np.ndarray:
    """The empty squares where a piece of ``board``'s owner completes four, by the lookahead
    bot's own line rule, square by square."""
    filled = board.any(axis=2)
    return np.array([[not filled[r, c] and lookahead.completes_line(board[:, :, 0] > 0, r, c)
                      for c in range(7)] for r in range(6)])


def test_the_threat_planes_mark_every_square_that_completes_four() -> None:
    game = connect4_env.make_env(landing_plane=True, threat_planes=True)
    assert game.observation_space.shape == (6, 7, 5)
    marked = 0
    for seed in range(12):
        for plain, seen in lockstep_games(seed, landing_plane=True, threat_planes=True):
            assert seen.shape == (6, 7, 5) and seen.dtype == np.int8
            np.testing.assert_array_equal(seen[:, :, :2], plain)
            np.testing.assert_array_equal(seen[:, :, 2], lowest_empty(plain))
            np.testing.assert_array_equal(seen[:, :, 3], threat_squares(plain))
            np.testing.assert_array_equal(seen[:, :, 4], threat_squares(plain[:, :, ::-1]))
            marked += int(seen[:, :, 3:].sum())
    assert marked > 20  # random games do make threats: the planes are not all zeros


def test_a_row_of_three_threatens_both_ends_and_a_column_its_top() -> None:
    board = np.zeros((6, 7, 2), np.int8)
    board[5, 1:4, 0] = 1          # the mover: three in the bottom row, columns 1-3
    board[3:6, 6, 1] = 1          # the opponent: three stacked in column 6
    seen = connect4_env.threat_planes(board)
    assert {tuple(x) for x in np.argwhere(seen[:, :, 0])} == {(5, 0), (5, 4)}
    assert {tuple(x) for x in np.argwhere(seen[:, :, 1])} == {(2, 6)}


def test_without_the_plane_the_example_sees_pettingzoos_two_planes() -> None:
    game = as_multi_agent(connect4_env.make_env())
    assert game.observation_space.shape == (6, 7, 2)


def test_the_cnn_agent_builds_on_three_planes() -> None:
    policy = build_policy(str(EXAMPLE / "connect4_env.py"), str(EXAMPLE / "connect4_cnn_agent.py"),
                          {"landing_plane": True}, 0)
    board = np.zeros((2, 6, 7, 3), np.int8)
    board[:, 5, :, 2] = 1
    acted = policy.act(board, np.ones((2, 7), bool))
    assert np.asarray(acted.actions).shape == (2,)
