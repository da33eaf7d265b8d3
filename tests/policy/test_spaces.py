"""Policies refuse spaces they cannot act in with a ScriptError that names the space and a fix."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.wrappers import Flatten
from msagent.errors import ScriptError, UserError
from msagent.policy import ActionSpec, Policy
from msagent.policy.networks import CNN

BOX4 = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
TWO = gym.spaces.Discrete(2)


def test_dict_observation_space_names_the_space_and_flatten() -> None:
    space = gym.spaces.Dict({"pos": BOX4, "id": gym.spaces.Discrete(3)})
    with pytest.raises(ScriptError) as info:
        Policy(space, TWO)
    message = str(info.value)
    assert message.startswith(f"unsupported observation space {space!r}: msagent policies take "
                              "a Box observation space; flatten it: return "
                              "msagent.envs.wrappers.Flatten(env) in make_env")
    assert isinstance(info.value, UserError)


def test_tuple_observation_space_is_refused_the_same_way() -> None:
    space = gym.spaces.Tuple((BOX4, BOX4))
    with pytest.raises(ScriptError, match=r"unsupported observation space Tuple\(.*Flatten"):
        Policy(space, TWO)


def test_discrete_observation_space_suggests_one_hot() -> None:
    with pytest.raises(ScriptError) as info:
        Policy(gym.spaces.Discrete(16), TWO)
    message = str(info.value)
    assert "unsupported observation space Discrete(16)" in message
    assert "encode it one-hot" in message and "msagent.envs.wrappers.Flatten(env)" in message
    assert "CNN" not in message


def test_a_flattened_discrete_observation_space_works() -> None:
    env = gym.wrappers.FlattenObservation(gym.make("FrozenLake-v1"))
    policy = Policy(env.observation_space, env.action_space, seed=0)
    obs, _ = env.reset(seed=0)
    assert policy.obs_shape == (16,) and policy.act(obs[None]).actions.shape == (1,)


def test_the_hint_s_own_wrapper_makes_the_space_work() -> None:
    game = Flatten(gym.make("FrozenLake-v1"))  # what the error message tells users to write
    policy = Policy(game.observation_space, game.action_space, seed=0)
    obs = game.reset(seed=0).obs[0]
    assert policy.obs_shape == (16,) and obs.sum() == 1.0  # one-hot
    assert policy.act(obs[None]).actions.shape == (1,)


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4, 5), ()])
def test_box_of_unsupported_rank_names_the_shape(shape: tuple[int, ...]) -> None:
    space = gym.spaces.Box(0.0, 1.0, shape, np.float32)
    with pytest.raises(ScriptError) as info:
        Policy(space, TWO)
    assert str(info.value).startswith(f"unsupported observation space {space!r}: msagent "
                                      "policies take 1-d observations (MLP) or 3-d images")


def test_a_plain_shape_of_unsupported_rank_is_refused_too() -> None:
    with pytest.raises(ScriptError, match=r"unsupported observation shape \(3, 4\): "):
        Policy((3, 4), TWO)


@pytest.mark.parametrize("space", [
    gym.spaces.MultiDiscrete([[3, 3], [2, 2]]),
    gym.spaces.MultiBinary([2, 2]),
    gym.spaces.Box(-1.0, 1.0, (2, 2), np.float32),
    gym.spaces.Dict({"a": TWO}),
])
def test_unsupported_action_spaces_name_the_space_and_what_works(space: gym.Space) -> None:
    with pytest.raises(ScriptError) as info:
        Policy(BOX4, space)
    assert str(info.value) == (
        f"unsupported action space {space!r}: msagent policies act in a Discrete(n) space, a "
        "1-d MultiDiscrete space (both starting at 0), a 1-d MultiBinary space or a 1-d Box "
        "space; wrap the env (in make_env) so that its action_space is one of these")


def test_supported_action_spaces_still_translate() -> None:
    assert ActionSpec.from_space(gym.spaces.Discrete(5)) == ActionSpec.discrete(5)
    box = ActionSpec.from_space(gym.spaces.Box(-2.0, 2.0, (3,), np.float32))
    assert box.continuous and box.size == 3 and box.low == (-2.0,) * 3


def test_single_observation_without_batch_axis_gets_a_hint() -> None:
    policy = Policy((4,), TWO, seed=0)
    with pytest.raises(ScriptError) as info:
        policy.act(np.zeros(4, np.float32))
    assert str(info.value) == ("observation batch has shape (4,); the policy expects "
                               "[N, *obs_shape] = [N, 4]; add the batch axis: obs[None]")


def test_image_policy_names_all_dimensions() -> None:
    policy = Policy((7, 7, 3), TWO, seed=0)
    with pytest.raises(ScriptError, match=r"expects \[N, \*obs_shape\] = \[N, 7, 7, 3\]$"):
        policy.act(np.zeros((2, 7, 7), np.uint8))


def test_cnn_on_a_flat_shape_is_a_script_error() -> None:
    with pytest.raises(ScriptError, match=r"CNN needs a 3-d observation shape .* got \(4,\)"):
        CNN((4,))
