"""Observation and stepping wrappers (``msagent.envs.wrappers``) on a small game whose every
frame is known, and on a real one-seat Gymnasium game."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.multi_agent import MultiAgentEnv, Turn
from msagent.envs.wrappers import (Flatten, FrameSkip, FrameStack, Grayscale, Resize,
                                   SeatIndicator)
from msagent.errors import ConfigError, ScriptError
from msagent.policy import Policy


class CountingGame:
    """Two seats; the frame seat ``s`` sees at step ``t`` is filled with ``10 * t + s``.

    Simultaneous (both seats act each step) or turn-based (seat ``t % 2`` acts); rewards at
    step ``t`` are ``[t, -t]``; the game ends after ``length`` steps, truncated (with
    ``final_obs``) or terminated.
    """

    seats = ("a", "b")
    action_space = gym.spaces.Discrete(3)

    def __init__(self, length: int = 6, truncate: bool = False, turn_based: bool = False,
                 shape: tuple[int, ...] = (2, 3, 1)) -> None:
        self.length, self.truncate, self.turn_based, self.shape = (length, truncate,
                                                                   turn_based, shape)
        self.observation_space = gym.spaces.Box(0, 255, shape, np.uint8)
        self.t = 0
        self.steps_taken = 0

    def frame(self, seat: int) -> np.ndarray:
        return np.full(self.shape, 10 * self.t + seat, np.uint8)

    def _turn(self, rewards: np.ndarray) -> Turn:
        if self.t >= self.length:
            final = {s: self.frame(s) for s in range(2)} if self.truncate else {}
            return Turn((), {}, None, rewards, not self.truncate, self.truncate, final)
        to_act = (self.t % 2,) if self.turn_based else (0, 1)
        return Turn(to_act, {s: self.frame(s) for s in to_act}, None, rewards)

    def reset(self, seed: int | None = None) -> Turn:
        self.t = 0
        return self._turn(np.zeros(2))

    def step(self, actions: dict[int, int]) -> Turn:
        self.t += 1
        self.steps_taken += 1
        return self._turn(np.array([self.t, -self.t], dtype=float))

    def close(self) -> None:
        pass


def values(stack: np.ndarray) -> list[int]:
    """The value each frame of a stack of constant frames holds, oldest first."""
    return [int(stack[0, 0, c]) for c in range(stack.shape[-1])]


def test_the_counting_game_speaks_the_protocol() -> None:
    assert isinstance(CountingGame(), MultiAgentEnv)


def test_frame_stack_holds_the_last_k_frames_per_seat_oldest_first() -> None:
    env = FrameStack(CountingGame(length=10), 4)
    assert env.observation_space.shape == (2, 3, 4)
    assert env.observation_space.dtype == np.uint8 and env.seats == ("a", "b")
    turn = env.reset()
    assert values(turn.obs[0]) == [0, 0, 0, 0] and values(turn.obs[1]) == [1, 1, 1, 1]
    turn = env.step({0: 0, 1: 0})
    assert values(turn.obs[0]) == [0, 0, 0, 10] and values(turn.obs[1]) == [1, 1, 1, 11]
    for _ in range(4):
        turn = env.step({0: 0, 1: 0})
    assert values(turn.obs[0]) == [20, 30, 40, 50] and values(turn.obs[1]) == [21, 31, 41, 51]
    assert turn.obs[0].shape == (2, 3, 4) and turn.obs[0].dtype == np.uint8
    assert env.observation_space.contains(turn.obs[0])


def test_frame_stack_starts_afresh_each_game() -> None:
    env = FrameStack(CountingGame(length=3), 3)
    turn = env.reset()
    while not turn.done:
        turn = env.step({0: 1, 1: 1})
    assert turn.terminated and turn.final_obs == {}
    turn = env.reset()
    assert values(turn.obs[0]) == [0, 0, 0] and values(turn.obs[1]) == [1, 1, 1]


def test_frame_stack_stacks_the_final_observations_of_a_truncated_game() -> None:
    env = FrameStack(CountingGame(length=3, truncate=True), 3)
    turn = env.reset()
    while not turn.done:
        turn = env.step({0: 1, 1: 1})
    assert turn.truncated and turn.obs == {}
    assert values(turn.final_obs[0]) == [10, 20, 30] and values(turn.final_obs[1]) == [11, 21, 31]


def test_frame_stack_moves_a_seat_on_only_at_its_own_turns() -> None:
    env = FrameStack(CountingGame(length=8, turn_based=True), 3)
    turn = env.reset()
    assert turn.to_act == (0,) and values(turn.obs[0]) == [0, 0, 0]
    turn = env.step({0: 0})  # t = 1: seat 1's first frame
    assert turn.to_act == (1,) and values(turn.obs[1]) == [11, 11, 11]
    turn = env.step({1: 0})  # t = 2: seat 0 again
    assert values(turn.obs[0]) == [0, 0, 20]
    turn = env.step({0: 0})
    turn = env.step({1: 0})  # t = 4
    assert values(turn.obs[0]) == [0, 20, 40]


def test_frame_stack_hands_out_arrays_it_does_not_change_later() -> None:
    env = FrameStack(CountingGame(length=10), 2)
    first = env.reset().obs[0]
    kept = first.copy()
    env.step({0: 0, 1: 0})
    first[:] = 99  # a consumer writing into what it got leaves the stack alone
    np.testing.assert_array_equal(first, 99)
    assert values(env.step({0: 0, 1: 0}).obs[0]) == [10, 20]
    assert values(kept) == [0, 0]


def test_frame_stack_of_vectors_concatenates_them() -> None:
    env = FrameStack(gym.make("CartPole-v1"), 3)  # a real one-seat Gymnasium game
    assert env.seats == ("agent_0",) and env.observation_space.shape == (12,)
    turn = env.reset(seed=0)
    first = turn.obs[0]
    np.testing.assert_array_equal(first, np.tile(first[:4], 3))
    turn = env.step({0: 1})
    np.testing.assert_array_equal(turn.obs[0][:8], first[4:])
    assert not np.array_equal(turn.obs[0][8:], first[8:])
    assert env.observation_space.contains(turn.obs[0].astype(np.float32))


def test_grayscale_uses_the_luma_weights() -> None:
    class Colours(CountingGame):
        def frame(self, seat: int) -> np.ndarray:
            image = np.zeros(self.shape, np.uint8)
            image[0, 0] = (255, 0, 0)
            image[0, 1] = (0, 255, 0)
            image[1, 0] = (0, 0, 255)
            image[1, 1] = (255, 255, 255)
            return image

    env = Grayscale(Colours(shape=(2, 2, 3)))
    assert env.observation_space.shape == (2, 2, 1)
    obs = env.reset().obs[0]
    assert obs.dtype == np.uint8 and obs.shape == (2, 2, 1)
    assert obs[:, :, 0].tolist() == [[76, 150], [29, 255]]  # 0.299, 0.587, 0.114 of 255


def test_grayscale_refuses_frames_that_are_not_rgb() -> None:
    with pytest.raises(ScriptError, match=r"Grayscale needs RGB frames .* \(2, 3, 1\)"):
        Grayscale(CountingGame())


def test_resize_averages_areas_and_keeps_the_dtype() -> None:
    class Quadrants(CountingGame):
        def frame(self, seat: int) -> np.ndarray:
            image = np.zeros(self.shape, np.uint8)
            image[:2, :2], image[:2, 2:], image[2:, :2], image[2:, 2:] = 0, 100, 200, 40
            image[0, 0] = 8  # the top-left quadrant averages to 2
            return image

    env = Resize(Quadrants(shape=(4, 4, 1)), 2, 2)
    assert env.observation_space.shape == (2, 2, 1) and env.observation_space.dtype == np.uint8
    obs = env.reset().obs[0]
    assert obs.dtype == np.uint8 and obs[:, :, 0].tolist() == [[2, 100], [200, 40]]


def test_resize_names_what_it_cannot_resize() -> None:
    with pytest.raises(ScriptError, match="Resize needs image observations.*Discrete"):
        Resize(as_multi_agent(_discrete_observation_game()), 8, 8)
    with pytest.raises(ConfigError, match="unknown method 'cubic'"):
        Resize(CountingGame(), 2, 2, method="cubic")
    with pytest.raises(ConfigError, match="height must be an integer >= 1, got 0"):
        Resize(CountingGame(), 0, 2)


def test_seat_indicator_appends_a_plane_per_seat() -> None:
    env = SeatIndicator(FrameStack(CountingGame(), 2))
    assert env.observation_space.shape == (2, 3, 3)
    assert env.observation_space.high[0, 0].tolist() == [255, 255, 255]
    turn = env.reset()
    assert values(turn.obs[0]) == [0, 0, 0] and values(turn.obs[1]) == [1, 1, 255]
    assert all(env.observation_space.contains(o) for o in turn.obs.values())


def test_frame_skip_repeats_actions_and_sums_rewards() -> None:
    game = CountingGame(length=10)
    env = FrameSkip(game, 4)
    env.reset()
    turn = env.step({0: 2, 1: 1})
    assert game.t == 4 and turn.rewards.tolist() == [1 + 2 + 3 + 4, -(1 + 2 + 3 + 4)]
    assert values(turn.obs[0]) == [40]
    env.step({0: 2, 1: 1})
    turn = env.step({0: 2, 1: 1})  # only 2 frames were left: the game ended after them
    assert game.t == 10 and turn.done and turn.rewards.tolist() == [9 + 10, -(9 + 10)]


def test_frame_skip_stops_when_the_seats_to_act_change() -> None:
    game = CountingGame(length=10, turn_based=True)
    env = FrameSkip(game, 4)
    env.reset()
    turn = env.step({0: 1})
    assert game.steps_taken == 1 and turn.to_act == (1,)
    with pytest.raises(ConfigError, match="skip must be an integer >= 1"):
        FrameSkip(CountingGame(), 0)


def test_image_wrappers_work_on_a_one_seat_atari_game() -> None:
    ale_py = pytest.importorskip("ale_py")
    gym.register_envs(ale_py)
    env = FrameStack(Resize(Grayscale(FrameSkip(gym.make("ALE/Boxing-v5", frameskip=1), 4)),
                            84, 84), 4)
    assert env.seats == ("agent_0",) and env.observation_space.shape == (84, 84, 4)
    turn = env.reset(seed=0)
    assert turn.obs[0].shape == (84, 84, 4) and turn.obs[0].dtype == np.uint8
    previous = turn.obs[0]
    for _ in range(30):
        turn = env.step({0: 1})  # fire
        np.testing.assert_array_equal(turn.obs[0][..., :3], previous[..., 1:])
        previous = turn.obs[0]
    assert env.observation_space.contains(previous)
    assert len({previous[..., c].tobytes() for c in range(4)}) > 1  # the frames move
    env.close()


def _discrete_observation_game() -> gym.Env:
    """A real Gymnasium game whose observations are not images (FrozenLake: Discrete(16))."""
    return gym.make("FrozenLake-v1")


def test_flatten_one_hot_encodes_every_seat_of_a_pettingzoo_game() -> None:
    from pettingzoo.classic import rps_v2

    game = Flatten(rps_v2.parallel_env(num_actions=3, max_cycles=5))
    assert game.observation_space == gym.spaces.Box(0.0, 1.0, (4,), np.float32)
    first = game.reset(seed=0)
    for seat in (0, 1):  # nothing played yet: "no move" (3)
        np.testing.assert_array_equal(first.obs[seat], [0, 0, 0, 1])
        assert first.obs[seat].dtype == np.float32
    turn = game.step({0: 0, 1: 2})  # each seat observes the other's last move
    np.testing.assert_array_equal(turn.obs[0], [0, 0, 1, 0])
    np.testing.assert_array_equal(turn.obs[1], [1, 0, 0, 0])
    policy = Policy(game.observation_space, game.action_space, seed=0)
    assert policy.act(np.stack([turn.obs[0], turn.obs[1]])).actions.shape == (2,)


class PartsEnv(gym.Env):
    """A one-seat game observing a Dict of a Box and a Discrete part."""

    observation_space = gym.spaces.Dict({"pos": gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
                                         "id": gym.spaces.Discrete(3)})
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        return {"pos": np.array([0.5, -0.25], np.float32), "id": 2}, {}

    def step(self, action: int) -> tuple:
        return {"pos": np.array([1.0, 0.0], np.float32), "id": 0}, 1.0, True, False, {}


def test_flatten_concatenates_the_parts_of_a_dict_observation() -> None:
    game = Flatten(PartsEnv())
    space = game.observation_space
    assert space.shape == (5,) and space.dtype == np.float32
    obs = game.reset(seed=0).obs[0]
    expected = gym.spaces.flatten(PartsEnv.observation_space,
                                  {"pos": np.array([0.5, -0.25], np.float32), "id": 2})
    np.testing.assert_array_equal(obs, expected.astype(np.float32))
    assert sorted(obs.tolist()) == [-0.25, 0.0, 0.0, 0.5, 1.0]  # the pos values and a one-hot
    final = game.step({0: 1})
    assert final.terminated and final.obs == {}


def test_flatten_refuses_a_space_without_a_fixed_size() -> None:
    class Moves(PartsEnv):
        observation_space = gym.spaces.Sequence(gym.spaces.Discrete(3))

    with pytest.raises(ScriptError, match=r"Flatten cannot flatten the observation space "
                                          r"Sequence\(.*it has no fixed size"):
        Flatten(Moves())
