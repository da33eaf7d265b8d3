"""The Atari baselines' preprocessing as wrappers: the maximum of the last two frames, the
reward's sign and random no-op starts, and potential-based shaping, on small games whose every
frame is known."""

from __future__ import annotations

import numpy as np
import pytest

from msagent.envs.multi_agent import points
from msagent.envs.play import play_game
from msagent.envs.wrappers import ClipReward, FrameSkip, NoopStart, PotentialShaping
from msagent.errors import ConfigError, ScriptError
from tests.envs.test_wrappers import CountingGame, values


class FlickerGame(CountingGame):
    """The counting game whose odd steps show a blank frame (a sprite drawn every other frame)."""

    def frame(self, seat: int) -> np.ndarray:
        value = 0 if self.t % 2 else 10 * self.t + seat
        return np.full(self.shape, value, np.uint8)


def test_max_pool_sees_what_the_last_frame_alone_misses() -> None:
    plain, pooled = FrameSkip(FlickerGame(length=10), 3), FrameSkip(FlickerGame(length=10), 3,
                                                                     max_pool=True)
    plain.reset(), pooled.reset()
    assert values(plain.step({0: 0, 1: 0}).obs[0]) == [0]  # step 3 is blank
    turn = pooled.step({0: 0, 1: 0})
    assert values(turn.obs[0]) == [20] and values(turn.obs[1]) == [21]  # step 2's frame
    assert turn.rewards.tolist() == [1 + 2 + 3, -(1 + 2 + 3)]


def test_max_pool_applies_to_a_truncated_games_final_frames() -> None:
    env = FrameSkip(FlickerGame(length=3, truncate=True), 3, max_pool=True)
    env.reset()
    turn = env.step({0: 0, 1: 0})
    assert turn.truncated and values(turn.final_obs[0]) == [20]


def test_max_pool_of_a_one_frame_decision_keeps_that_frame() -> None:
    env = FrameSkip(FlickerGame(length=10, turn_based=True), 4, max_pool=True)
    env.reset()
    turn = env.step({0: 1})  # the seat to act changes at once: one frame played
    assert values(turn.obs[1]) == [0]


def test_clip_reward_gives_each_seat_its_rewards_sign() -> None:
    env = ClipReward(FrameSkip(CountingGame(length=10), 4))
    assert env.reset().rewards.tolist() == [0, 0]
    assert env.step({0: 0, 1: 0}).rewards.tolist() == [1, -1]


def test_noop_start_plays_a_seeded_random_number_of_noops() -> None:
    starts = []
    for seed in range(20):
        game = CountingGame(length=100)
        turn = NoopStart(game, 20).reset(seed=seed)  # frames hold 10 * t: up to 200 in uint8
        assert 1 <= game.t <= 20 and values(turn.obs[0]) == [10 * game.t]
        assert turn.rewards.tolist() == [0, 0]  # no-op points are not the game's
        starts.append(game.t)
    assert len(set(starts)) >= 8
    again = CountingGame(length=100)
    NoopStart(again, 20).reset(seed=0)
    assert again.t == starts[0]


def test_noop_start_restarts_a_game_that_ends_during_its_noops() -> None:
    game = CountingGame(length=2)
    env = NoopStart(game, 30)
    for seed in range(10):
        turn = env.reset(seed=seed)
        assert not turn.done and game.t < 2


def test_noop_start_refuses_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="max_noops must be an integer >= 1"):
        NoopStart(CountingGame(), 0)
    with pytest.raises(ConfigError, match="noop_action 7 is not an action"):
        NoopStart(CountingGame(), 30, noop_action=7)


def test_clip_reward_keeps_the_games_points_as_the_score() -> None:
    env = FrameSkip(ClipReward(CountingGame(length=10)), 2)  # clipped inside the skip
    env.reset()
    turn = env.step({0: 0, 1: 0})
    assert turn.rewards.tolist() == [2, -2] and turn.score.tolist() == [1 + 2, -(1 + 2)]
    assert points(turn).tolist() == [3, -3]
    plain = FrameSkip(CountingGame(length=10), 2)
    plain.reset()
    assert plain.step({0: 0, 1: 0}).score is None  # no wrapper shaped the rewards


def test_returns_and_outcomes_are_counted_on_the_games_points() -> None:
    game = ClipReward(FrameSkip(CountingGame(length=4), 2))
    first = lambda obs, masks: np.zeros(len(obs), dtype=np.int64)  # noqa: E731
    record = play_game(game, [first, first], [0, 1], seed=0)
    assert record.returns == (1 + 2 + 3 + 4, -(1 + 2 + 3 + 4))  # not the signs' sum, 2
    assert record.outcomes == (1, -1)


class Potential:
    """A potential that reads the counting game's clock: seat 0 gets ``t``, seat 1 ``-2 t``."""

    def __init__(self, game: CountingGame) -> None:
        self.game = game

    def __call__(self) -> np.ndarray:
        return np.array([self.game.t, -2.0 * self.game.t])


def test_potential_shaping_adds_the_potentials_change_and_keeps_the_points() -> None:
    game = CountingGame(length=3)
    env = PotentialShaping(game, Potential(game))
    assert env.reset().rewards.tolist() == [0, 0]
    turn = env.step({0: 0, 1: 0})  # t = 1: points [1, -1], potential 0 -> [1, -2]
    assert turn.rewards.tolist() == [2, -3] and points(turn).tolist() == [1, -1]
    env.step({0: 0, 1: 0})
    last = env.step({0: 0, 1: 0})  # terminated at t = 3: the potential falls to 0
    assert last.terminated and last.rewards.tolist() == [3 - 2, -3 + 4]


def test_potential_shaping_sums_to_minus_the_first_potential_over_a_game() -> None:
    game = CountingGame(length=7)
    env = PotentialShaping(ClipReward(game), Potential(game))
    turns = [env.reset()]
    while not turns[-1].done:
        turns.append(env.step({0: 0, 1: 0}))
    shaping = sum(t.rewards for t in turns) - sum(np.sign(points(t)) for t in turns)
    np.testing.assert_allclose(shaping, [0.0, 0.0])  # every game starts at potential 0 here
    assert sum(points(t) for t in turns).tolist() == [28, -28]  # the game's own points


def test_potential_shaping_bootstraps_a_truncated_games_last_potential() -> None:
    game = CountingGame(length=2, truncate=True)
    env = PotentialShaping(game, Potential(game))
    env.reset(), env.step({0: 0, 1: 0})
    last = env.step({0: 0, 1: 0})
    assert last.truncated and last.rewards.tolist() == [2 + 1, -2 - 2]  # potential kept


@pytest.mark.parametrize("bad", [np.array([1.0]), np.array([np.nan, 0.0])])
def test_a_bad_potential_is_refused_by_name(bad: np.ndarray) -> None:
    env = PotentialShaping(CountingGame(), lambda: bad)
    with pytest.raises(ScriptError, match="PotentialShaping: the potential must give 2 finite"):
        env.reset()
