"""PettingZoo AEC and Parallel envs through the adapters: turn order, masks, rewards once."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3, rps_v2, tictactoe_v3
from pettingzoo.utils import aec_to_parallel

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.pettingzoo import AECAdapter, ParallelAdapter
from msagent.envs.multi_agent import MultiAgentEnv
from msagent.errors import IllegalActionError


def play(env: MultiAgentEnv, moves: list[int]):
    """Play ``moves`` in turn; (turns, summed rewards per seat)."""
    turn = env.reset(seed=0)
    turns, total = [turn], turn.rewards.copy()
    for move in moves:
        turn = env.step({turn.to_act[0]: move})
        turns.append(turn)
        total += turn.rewards
    return turns, total


def test_connect_four_is_turn_based_with_masks_and_split_observations() -> None:
    env = as_multi_agent(connect_four_v3.env())
    assert isinstance(env, AECAdapter) and env.seats == ("player_0", "player_1")
    assert env.observation_space.shape == (6, 7, 2) and env.action_space.n == 7
    turns, _ = play(env, [3, 3, 3, 3, 3, 3])
    assert [t.to_act for t in turns] == [(0,), (1,)] * 3 + [(0,)]
    last = turns[-1]
    assert last.masks[0].dtype == bool and last.masks[0].tolist() == [1, 1, 1, 0, 1, 1, 1]
    assert last.obs[0].shape == (6, 7, 2)


def test_connect_four_observation_planes_are_mover_then_opponent() -> None:
    turns, _ = play(as_multi_agent(connect_four_v3.env()), [3, 3, 4])
    obs = turns[-1].obs[1]  # player_1 to move: its piece at (4, 3), player_0's at (5, 3), (5, 4)
    assert np.argwhere(obs[:, :, 0]).tolist() == [[4, 3]]
    assert np.argwhere(obs[:, :, 1]).tolist() == [[5, 3], [5, 4]]


def test_win_rewards_both_seats_in_the_terminal_turn_once() -> None:
    turns, total = play(as_multi_agent(connect_four_v3.env()), [0, 1, 0, 1, 0, 1, 0])
    assert turns[-1].terminated and turns[-1].to_act == () and not turns[-1].truncated
    assert turns[-1].rewards.tolist() == [1.0, -1.0]
    assert all(not t.rewards.any() for t in turns[:-1])
    assert total.tolist() == [1.0, -1.0] and total.sum() == 0


def test_tictactoe_second_seat_win_and_draw() -> None:
    env = as_multi_agent(tictactoe_v3.env())
    assert env.seats == ("player_1", "player_2")
    turns, total = play(env, [0, 3, 1, 4, 8, 5])  # player_2 completes the middle row
    assert turns[-1].done and total.tolist() == [-1.0, 1.0]
    turns, total = play(env, [0, 1, 2, 4, 3, 5, 7, 6, 8])  # full board, nobody wins
    assert turns[-1].terminated and total.tolist() == [0.0, 0.0]


def test_rewards_are_delivered_once_over_many_random_games() -> None:
    env = as_multi_agent(connect_four_v3.env())
    rng = np.random.default_rng(1)
    for game in range(30):
        turn, total = env.reset(seed=game), np.zeros(2)
        while not turn.done:
            seat = turn.to_act[0]
            turn = env.step({seat: int(rng.choice(np.flatnonzero(turn.masks[seat])))})
            total += turn.rewards
        assert total.sum() == 0 and sorted(total.tolist()) in ([-1.0, 1.0], [0.0, 0.0])


def test_illegal_action_is_refused_naming_seat_and_action_and_env_stays_usable() -> None:
    env = as_multi_agent(connect_four_v3.env())
    turn = env.reset(seed=0)
    for _ in range(6):
        turn = env.step({turn.to_act[0]: 2})
    with pytest.raises(IllegalActionError, match=r"connect_four_v3: seat player_0 chose action 2"
                       r".*legal actions: \[0, 1, 3, 4, 5, 6\]"):
        env.step({0: 2})
    with pytest.raises(IllegalActionError, match="player_1"):
        env.step({1: 0})  # not this seat's turn
    turn = env.step({0: 0})
    assert turn.to_act == (1,) and not turn.done


def test_parallel_env_lets_every_seat_act_at_once() -> None:
    env = as_multi_agent(aec_to_parallel(rps_v2.env(max_cycles=3)))
    assert isinstance(env, ParallelAdapter) and env.seats == ("player_0", "player_1")
    turn, total, steps = env.reset(seed=0), np.zeros(2), 0
    while not turn.done:
        assert turn.to_act == (0, 1) and set(turn.obs) == {0, 1}
        turn = env.step({0: 0, 1: 1})  # paper beats rock
        total, steps = total + turn.rewards, steps + 1
    assert steps == 3 and total.tolist() == [-3.0, 3.0]


def test_parallel_env_refuses_an_action_outside_the_space_before_stepping() -> None:
    env = as_multi_agent(aec_to_parallel(rps_v2.env(max_cycles=3)))
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="seat player_1 chose action 7"):
        env.step({0: 0, 1: 7})
    with pytest.raises(IllegalActionError, match="one action for each seat"):
        env.step({0: 0})
    assert env.step({0: 1, 1: 1}).rewards.tolist() == [0.0, 0.0]
