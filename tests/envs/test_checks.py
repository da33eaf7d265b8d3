"""ObsChecker: a batch that breaks the declared space is refused, naming env, step and value."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs import ObsChecker
from msagent.errors import EnvDataError, UserError

BOX = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)
WHERE = "(env steps since its first reset, all episodes)"
DECLARED = f"declared observation_space {BOX} expects shape (4,) dtype float32"


def _checker(space: gym.Space = BOX) -> ObsChecker:
    return ObsChecker(space, "worker EnvWorker#0", num_envs=4)


def _message(call) -> str:
    with pytest.raises(EnvDataError) as info:
        call()
    assert isinstance(info.value, UserError)
    return str(info.value)


def test_valid_batches_pass_and_float64_is_fine_for_float32() -> None:
    checker = _checker()
    checker.check_obs(np.zeros((4, 4), np.float32), 0)
    checker.check_obs(np.zeros((4, 4), np.float64), 1)
    checker.check_obs(np.zeros((4, 4), np.int64), 2)
    checker.check_rewards(np.ones(4), 2)


def test_nan_observation_names_env_step_element_and_space() -> None:
    obs = np.zeros((4, 4), np.float32)
    obs[3, 2] = np.nan
    assert _message(lambda: _checker().check_obs(obs, 1234)) == (
        f"env 3 of worker EnvWorker#0, step 1234 {WHERE}: observation[2] = nan is not finite "
        f"(1 of 16 values in the batch); {DECLARED}, got shape (4,) dtype float32")


def test_the_first_bad_env_is_named() -> None:
    obs = np.zeros((4, 4), np.float64)
    obs[1, 0], obs[2, 3] = np.inf, np.nan
    assert _message(lambda: _checker().check_obs(obs, 5)).startswith(
        f"env 1 of worker EnvWorker#0, step 5 {WHERE}: observation[0] = inf is not finite "
        "(2 of 16 values in the batch)")


def test_wrong_observation_shape_names_declared_and_actual() -> None:
    assert _message(lambda: _checker().check_obs(np.zeros((4, 5), np.float32), 7)) == (
        f"worker EnvWorker#0, step 7 {WHERE}: observation batch does not match the space: "
        f"{DECLARED}, so batches [4, 4]; got batch shape (4, 5) dtype float32")


def test_wrong_number_of_rows_is_refused() -> None:
    message = _message(lambda: _checker().check_obs(np.zeros((3, 4), np.float32), 1))
    assert message.endswith("so batches [4, 4]; got batch shape (3, 4) dtype float32")


def test_float_observations_for_an_integer_space_are_refused() -> None:
    space = gym.spaces.Discrete(3)
    message = _message(lambda: _checker(space).check_obs(np.zeros(4, np.float32), 0))
    assert message == (
        f"worker EnvWorker#0, step 0 {WHERE}: observation batch does not match the space: "
        "declared observation_space Discrete(3) expects shape () dtype int64, so batches [4]; "
        "got batch shape (4,) dtype float32")


def test_discrete_observation_outside_the_space_is_named() -> None:
    space = gym.spaces.Discrete(3)
    obs = np.array([0, 1, 5, 2])
    assert _message(lambda: _checker(space).check_obs(obs, 9)).startswith(
        f"env 2 of worker EnvWorker#0, step 9 {WHERE}: observation = 5 lies outside "
        "Discrete(3) (1 of 4 values in the batch)")


def test_image_space_checks_bytes_and_names_multi_dimensional_indices() -> None:
    space = gym.spaces.Box(0, 255, (2, 2, 1), np.uint8)
    checker = ObsChecker(space, "", num_envs=2)
    checker.check_obs(np.zeros((2, 2, 2, 1), np.uint8), 0)
    obs = np.zeros((2, 2, 2, 1), np.float32)
    obs[1, 0, 1, 0] = np.nan
    message = _message(lambda: checker.check_obs(obs, 3))
    assert message.startswith("the envs, step 3")  # float for a uint8 space: layout first
    space_f = gym.spaces.Box(0.0, 1.0, (2, 2, 1), np.float32)
    message = _message(lambda: ObsChecker(space_f).check_obs(obs, 3))
    assert message.startswith(f"env 1, step 3 {WHERE}: observation[0, 1, 0] = nan is not finite")


def test_infinite_reward_names_env_and_value() -> None:
    rewards = np.array([0.0, 1.0, -np.inf, 1.0])
    assert _message(lambda: _checker().check_rewards(rewards, 12)) == (
        f"env 2 of worker EnvWorker#0, step 12 {WHERE}: reward = -inf is not finite")


def test_rewards_of_the_wrong_shape_are_refused() -> None:
    assert _message(lambda: _checker().check_rewards(np.zeros((4, 2)), 3)) == (
        f"worker EnvWorker#0, step 3 {WHERE}: the reward batch should be [4] numbers, "
        "got shape (4, 2) dtype float64")


def test_unchecked_spaces_check_rewards_only() -> None:
    checker = ObsChecker(gym.spaces.Dict({"a": BOX}), "w", num_envs=2)
    checker.check_obs({"a": np.full((2, 4), np.nan)}, 0)
    with pytest.raises(EnvDataError, match="reward = nan"):
        checker.check_rewards(np.array([np.nan, 0.0]), 1)


def test_explain_finds_the_env_whose_own_observation_breaks_stacking() -> None:
    rows = [np.zeros(4, np.float32), np.zeros(5, np.float32), "text"]
    error = _checker().explain(rows, 8)
    assert str(error) == (
        f"env 1 of worker EnvWorker#0, step 8 {WHERE}: observation does not match the space: "
        f"{DECLARED}, got shape (5,) dtype float32")
    assert _checker().explain([np.zeros(4, np.float32)] * 4, 8) is None
    assert _checker().explain(None, 8) is None
