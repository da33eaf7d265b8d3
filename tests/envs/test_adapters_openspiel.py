"""OpenSpiel games through the adapter: turn-based, chance nodes, simultaneous moves."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pyspiel
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.openspiel import OpenSpielAdapter
from msagent.errors import IllegalActionError, ScriptError


def test_tic_tac_toe_is_turn_based_with_observation_tensors() -> None:
    env = as_multi_agent(pyspiel.load_game("tic_tac_toe"))
    assert isinstance(env, OpenSpielAdapter) and env.seats == ("player_0", "player_1")
    assert env.observation_space == gym.spaces.Box(-np.inf, np.inf, (3, 3, 3), np.float32)
    assert env.action_space == gym.spaces.Discrete(9)
    turn, total, order, played = env.reset(seed=0), np.zeros(2), [], []
    for move in [0, 3, 1, 4, 2]:  # player_0 fills the top row
        seat = turn.to_act[0]
        order.append(turn.to_act)
        assert turn.obs[seat].dtype == np.float32 and turn.obs[seat].shape == (3, 3, 3)
        assert np.flatnonzero(~turn.masks[seat]).tolist() == sorted(played)
        turn = env.step({seat: move})
        total, played = total + turn.rewards, played + [move]
    assert order == [(0,), (1,), (0,), (1,), (0,)]
    assert turn.terminated and turn.to_act == () and total.tolist() == [1.0, -1.0]


def test_kuhn_poker_chance_is_resolved_inside_with_the_seeded_rng() -> None:
    env = as_multi_agent(pyspiel.load_game("kuhn_poker"))
    first = env.reset(seed=3)
    assert first.to_act == (0,) and first.masks[0].tolist() == [True, True]
    assert env.observation_space.shape == (11,)  # the information-state tensor
    again = env.reset(seed=3).obs[0]
    assert np.array_equal(first.obs[0], again)
    deals = {tuple(env.reset(seed=s).obs[0]) for s in range(20)}
    assert len(deals) == 3  # player 0 holds each of the three cards in some game


def test_kuhn_poker_returns_sum_to_zero() -> None:
    env = as_multi_agent(pyspiel.load_game("kuhn_poker"))
    for seed in range(10):
        turn, total = env.reset(seed=seed), np.zeros(2)
        while not turn.done:
            turn = env.step({turn.to_act[0]: 1})  # bet / call
            total += turn.rewards
        assert total.sum() == 0 and abs(total[0]) == 2


def test_simultaneous_game_lets_both_seats_act() -> None:
    env = as_multi_agent(pyspiel.load_game("matrix_rps"))
    turn = env.reset(seed=0)
    assert turn.to_act == (0, 1) and set(turn.masks) == {0, 1}
    turn = env.step({0: 1, 1: 0})  # paper beats rock
    assert turn.terminated and turn.rewards.tolist() == [1.0, -1.0]


def test_goofspiel_plays_to_the_end_with_simultaneous_moves() -> None:
    env = as_multi_agent(pyspiel.load_game("goofspiel", {"num_cards": 4}))
    turn, steps, total = env.reset(seed=0), 0, np.zeros(2)
    while not turn.done:
        assert turn.to_act == (0, 1)
        turn = env.step({s: int(np.flatnonzero(turn.masks[s])[0]) for s in turn.to_act})
        steps, total = steps + 1, total + turn.rewards
    # the last card plays itself; the same card each round: a draw
    assert steps == 3 and total.tolist() == [0.0, 0.0]


def test_illegal_action_is_refused_and_the_game_goes_on() -> None:
    env = as_multi_agent(pyspiel.load_game("tic_tac_toe"))
    env.reset(seed=0)
    turn = env.step({0: 4})
    with pytest.raises(IllegalActionError, match=r"tic_tac_toe: seat player_1 chose action 4"):
        env.step({1: 4})
    with pytest.raises(IllegalActionError, match="action 9"):
        env.step({1: 9})
    assert env.step({1: 0}).to_act == (0,) and turn.to_act == (1,)


def test_privileged_observations_append_the_other_seats_information_state() -> None:
    game = pyspiel.load_game("kuhn_poker")
    env = OpenSpielAdapter(game, privileged=True)
    assert env.own_size == 11 and env.observation_space.shape == (22,)
    plain = OpenSpielAdapter(game)
    for seed in range(6):
        turn, same = env.reset(seed=seed), plain.reset(seed=seed)
        obs = turn.obs[0]
        assert np.array_equal(obs[:11], same.obs[0])  # the seat's own tensor comes first
        opponent = env._state.information_state_tensor(1)
        assert np.array_equal(obs[11:], np.asarray(opponent, np.float32))
        turn = env.step({0: 0})  # player 1 to act: its own tensor first, then player 0's
        assert np.array_equal(turn.obs[1][11:],
                              np.asarray(env._state.information_state_tensor(0), np.float32))
    cards = {int(np.argmax(env.reset(seed=s).obs[0][11 + 2:11 + 5])) for s in range(20)}
    assert len(cards) == 3  # the opponent's private card is in the critic's part


def test_privileged_observations_need_a_flat_information_state_tensor() -> None:
    with pytest.raises(ScriptError, match="tic_tac_toe.*information-state tensor"):
        OpenSpielAdapter(pyspiel.load_game("tic_tac_toe"), privileged=True)


def test_a_game_without_observation_tensors_is_refused_naming_it() -> None:
    with pytest.raises(ScriptError, match=r"coin_game implements neither an information-state "
                       r"tensor nor an observation tensor \(OpenSpiel: .*unimplemented"):
        OpenSpielAdapter(pyspiel.load_game("coin_game"))
