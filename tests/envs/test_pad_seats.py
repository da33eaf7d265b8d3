"""PadSeats: seats that act in different spaces (MPE's speaker and listener) get one padded
action space; the actions a seat lacks are masked off (Discrete) or ignored (Box), and the game
gets each seat's action in its own space."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.wrappers import PadObservations, PadSeats
from msagent.errors import IllegalActionError, ScriptError
from tests.envs.signal_game import Signal
from tests.envs.test_seat_spaces import Chase


def test_seats_acting_in_different_spaces_are_refused_naming_pad_seats() -> None:
    with pytest.raises(ScriptError, match=r"signal_v0 have different action spaces \(speaker: "
                       r"Discrete\(3\); listener: Discrete\(4\)\).*PadSeats\(env\)"):
        as_multi_agent(Signal())
    with pytest.raises(ScriptError, match=r"different action spaces.*PadSeats"):
        PadObservations(Signal())


def test_discrete_actions_are_padded_and_the_missing_ones_masked() -> None:
    game = Signal()
    env = PadSeats(game)
    assert env.action_space == gym.spaces.Discrete(4) and env.observation_space.shape == (6,)
    turn = env.reset(seed=1)
    assert turn.masks is not None
    assert turn.masks[0].tolist() == [True, True, True, False]  # the speaker has 3 words
    assert turn.masks[1].tolist() == [True] * 4
    with pytest.raises(IllegalActionError, match=r"seat speaker chose action 3, which is not "
                       r"one of its 3 actions"):
        env.step({0: 3, 1: 0})
    assert game.actions == []  # refused before the game saw it
    env.step({0: np.int64(2), 1: 3})
    assert game.actions == [{"speaker": 2, "listener": 3}]
    assert all(type(a) is int for a in game.actions[0].values())


def test_the_games_own_masks_are_kept_and_padded() -> None:
    env = PadSeats(Signal(listener_mask=True))
    turn = env.reset(seed=0)
    assert turn.masks[1].tolist() == [False, True, True, True]
    assert turn.masks[0].tolist() == [True, True, True, False]
    with pytest.raises(IllegalActionError, match=r"listener chose action 0, which is not legal"):
        env.step({0: 1, 1: 0})


def test_box_actions_are_padded_and_each_seat_gets_its_own_values_clipped() -> None:
    game = Chase(prey_actions=gym.spaces.Box(0, 2, (2,), np.float32))
    env = PadSeats(game)
    space = env.action_space
    assert space.shape == (2,) and space.low.tolist() == [-1, 0]
    assert space.high.tolist() == [2, 2]
    assert env.reset(seed=0).masks is None
    env.step({0: np.array([3.0, 5.0], np.float32), 1: np.array([-3.0, 1.5], np.float32)})
    hunter, prey = game.moves[0]["hunter"], game.moves[0]["prey"]
    assert hunter.shape == (1,) and hunter.tolist() == [1.0]  # its one value, clipped
    assert prey.tolist() == [0.0, 1.5]
    with pytest.raises(IllegalActionError, match=r"seat prey chose action .*PadSeats takes 2"):
        env.step({0: np.zeros(2, np.float32), 1: np.zeros(3, np.float32)})


def test_a_mix_of_discrete_and_box_actions_is_refused() -> None:
    with pytest.raises(ScriptError, match=r"PadSeats pads Discrete.*not a mix.*hunter: Box.*"
                       r"prey: Discrete\(3\)"):
        PadSeats(Chase(prey_actions=gym.spaces.Discrete(3)))


def test_seats_sharing_their_action_space_get_no_masks() -> None:
    env = PadSeats(Chase())
    assert env.action_space == Chase().action_space("hunter")
    assert env.reset(seed=0).masks is None


def test_a_parallel_game_whose_seats_mask_unevenly_keeps_every_mask() -> None:
    """The listener's mask was dropped when the speaker sent none, so its illegal place 0 went
    to the game unchecked."""
    game = as_multi_agent(Signal(listener_mask=True), seat_spaces=True)
    turn = game.reset(seed=0)
    assert turn.masks[0].tolist() == [True] * 3 and turn.masks[1].tolist() == [0, 1, 1, 1]
    with pytest.raises(IllegalActionError, match=r"listener chose action 0, which is not legal"):
        game.step({0: 1, 1: 0})
