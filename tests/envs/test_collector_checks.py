"""The collector checks every observation, final observation and reward it collects
(one-seat games, as a single-policy env worker plays them)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs import MatchCollector, ObsChecker, policy_act, solo_collector
from msagent.errors import EnvDataError
from msagent.policy import Policy
from msagent.vocabulary import ModelKey

WHERE = "(env steps since its first reset, all episodes)"
LABEL = "worker EnvWorker#0"


class Corrupt(gym.Wrapper):
    """Changes what CartPole returns at its ``at``-th step (counted over all episodes)."""

    def __init__(self, env: gym.Env, at: int, change: Callable[[Any, float], tuple]) -> None:
        super().__init__(env)
        self.at, self.change, self.steps = at, change, 0

    def step(self, action: Any) -> tuple:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        if self.steps == self.at:
            obs, reward = self.change(obs, reward)
        return obs, reward, terminated, truncated, info


def _envs(bad_env: int, at: int, change: Callable, max_steps: int = 500) -> Callable[[], gym.Env]:
    """A maker of four CartPoles; env ``bad_env`` returns ``change(obs, reward)`` at its step
    ``at``."""
    index = itertools.count()

    def make() -> gym.Env:
        env = gym.make("CartPole-v1", max_episode_steps=max_steps)
        return Corrupt(env, at, change) if next(index) == bad_env else env

    return make


def _collector(make: Callable[[], gym.Env], label: str = "", checks: bool = True,
               checker: ObsChecker | None = None) -> MatchCollector:
    space = gym.make("CartPole-v1")
    policy = Policy(space.observation_space, space.action_space, seed=0)
    collector = solo_collector(make, 4, policy_act(policy, ModelKey("main", 1)), 8, seed=0,
                               checks=checks, label=label)
    if checker is not None:
        collector.checker = checker
    return collector


def _collect_error(make: Callable[[], gym.Env], **kwargs: Any) -> EnvDataError:
    collector = _collector(make, label=LABEL, **kwargs)
    with pytest.raises(EnvDataError) as info:
        for _ in range(4):
            collector.collect()
    return info.value


def _nan_at_2(obs: np.ndarray, reward: float) -> tuple:
    obs = obs.copy()
    obs[2] = np.nan
    return obs, reward


def test_nan_observation_names_env_step_and_element() -> None:
    error = _collect_error(_envs(bad_env=1, at=11, change=_nan_at_2))
    assert str(error).startswith(
        f"env 1 of {LABEL}, step 11 {WHERE}: observation[2] = nan is not finite (1 of 4 values")


def test_infinite_reward_is_refused() -> None:
    error = _collect_error(_envs(bad_env=3, at=4, change=lambda o, r: (o, float("inf"))))
    assert str(error) == f"env 3 of {LABEL}, step 4 {WHERE}: reward = inf is not finite"


def test_wrong_observation_shape_is_explained_not_left_to_numpy() -> None:
    error = _collect_error(_envs(bad_env=2, at=3, change=lambda o, r: (o[:3], r)))
    space = gym.make("CartPole-v1").observation_space
    assert str(error) == (
        f"env 2 of {LABEL}, step 3 {WHERE}: observation does not match the space: declared "
        f"observation_space {space} expects shape (4,) dtype float32, got shape (3,) "
        "dtype float32")
    assert isinstance(error.__cause__, ValueError)  # numpy's failed stacking


def test_nan_final_observation_of_a_truncated_episode_is_refused() -> None:
    error = _collect_error(_envs(bad_env=0, at=5, change=_nan_at_2, max_steps=5))
    assert str(error).startswith(
        f"env 0 of {LABEL}, step 5 {WHERE}: final observation[2] = nan is not finite")


def test_checks_can_be_disabled() -> None:
    collector = _collector(_envs(bad_env=1, at=3, change=_nan_at_2), checks=False)
    fragments = collector.collect()
    assert np.isnan(fragments[1].obs[3, 2]) and collector.checker is None


def test_a_given_checker_is_used_and_the_default_label_names_env_only() -> None:
    make = _envs(bad_env=1, at=2, change=_nan_at_2)
    checker = ObsChecker(gym.make("CartPole-v1").observation_space, "my envs")
    collector = _collector(make, checker=checker)
    with pytest.raises(EnvDataError) as info:
        collector.collect()
    error = info.value
    assert str(error).startswith(f"env 1 of my envs, step 2 {WHERE}: observation[2] = nan")
    collector = _collector(_envs(bad_env=1, at=2, change=_nan_at_2))
    with pytest.raises(EnvDataError, match=rf"^env 1, step 2 \(env steps"):
        collector.collect()


def test_an_env_raising_its_own_error_is_not_relabelled() -> None:
    def explode(obs: np.ndarray, reward: float) -> tuple:
        raise ValueError("the user's own bug")

    collector = _collector(_envs(bad_env=0, at=2, change=explode))
    with pytest.raises(ValueError, match="the user's own bug") as info:
        collector.collect()
    assert not isinstance(info.value, EnvDataError)
