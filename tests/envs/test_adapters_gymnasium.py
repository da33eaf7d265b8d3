"""as_multi_agent: Gymnasium envs as one seat, protocol objects as they are, others refused."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.gymnasium import GymnasiumAdapter
from msagent.envs.multi_agent import Turn
from msagent.errors import IllegalActionError, ScriptError


def test_cartpole_is_one_seat_and_truncation_gives_final_obs() -> None:
    env = as_multi_agent(gym.make("CartPole-v1", max_episode_steps=5))
    assert isinstance(env, GymnasiumAdapter) and env.seats == ("agent_0",)
    turn, total = env.reset(seed=0), 0.0
    assert turn.to_act == (0,) and turn.masks is None and turn.rewards.shape == (1,)
    for _ in range(5):
        last_obs = turn.obs[0]
        turn = env.step({0: 0 if last_obs[2] > 0 else 1})  # balance: 5 steps never fall
        total += float(turn.rewards[0])
    assert turn.truncated and not turn.terminated and turn.to_act == ()
    assert set(turn.final_obs) == {0} and turn.final_obs[0].shape == (4,) and total == 5.0


def test_termination_has_no_final_obs() -> None:
    env = as_multi_agent(gym.make("CartPole-v1"))
    turn = env.reset(seed=0)
    while not turn.done:
        turn = env.step({0: 1})  # always push right: falls over
    assert turn.terminated and turn.final_obs == {}


def test_action_outside_the_space_is_refused_and_env_stays_usable() -> None:
    env = as_multi_agent(gym.make("CartPole-v1"), label="cartpole")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"cartpole: seat agent_0 chose action 2"):
        env.step({0: 2})
    assert env.step({0: 1}).to_act == (0,)


class _Protocol:
    """An object that already speaks the protocol."""

    seats = ("a", "b")
    observation_space = action_space = gym.spaces.Discrete(2)

    def reset(self, seed: int | None = None) -> Turn:
        return Turn((0,), {0: np.zeros(())}, None, np.zeros(2))

    def step(self, actions: dict) -> Turn:
        return Turn((), {}, None, np.zeros(2), terminated=True)

    def close(self) -> None:
        pass


def test_protocol_objects_are_returned_as_they_are() -> None:
    game = _Protocol()
    assert as_multi_agent(game) is game


@pytest.mark.parametrize("value", [3, "connect_four", None])
def test_anything_else_is_refused_naming_its_type(value: object) -> None:
    with pytest.raises(ScriptError, match=rf"returned {type(value).__name__}, .*gymnasium.Env"
                                          ".*PettingZoo.*pyspiel.Game"):
        as_multi_agent(value, label="my_env.py")


def test_an_env_class_returned_uncalled_is_refused_with_the_fix() -> None:
    from pettingzoo.classic import tictactoe_v3

    with pytest.raises(ScriptError, match=r"returned the class raw_env itself, not an env; "
                                          r"call it \(return raw_env\(...\)\)"):
        as_multi_agent(tictactoe_v3.raw_env)
    with pytest.raises(ScriptError, match="returned the function make itself"):
        as_multi_agent(gym.make)


class _MaskedDictEnv(gym.Env):
    """Observations as ``{"observation", "action_mask"}`` maps; only action 2 is ever legal,
    and the episode is truncated after 3 steps."""

    observation_space = gym.spaces.Dict({
        "observation": gym.spaces.Box(0, 1, (2,), np.float32),
        "action_mask": gym.spaces.MultiBinary(4)})
    action_space = gym.spaces.Discrete(4)

    def _obs(self):
        return {"observation": np.full(2, self.t / 3, np.float32),
                "action_mask": np.array([0, 0, 1, 0], np.int8)}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.actions = 0, []
        return self._obs(), {}

    def step(self, action):
        self.actions.append(action)
        self.t += 1
        return self._obs(), 1.0, False, self.t >= 3, {}


def test_a_dict_observation_with_an_action_mask_gives_the_policy_its_observation_and_mask(
        ) -> None:
    env = _MaskedDictEnv()
    game = as_multi_agent(env)
    assert game.observation_space == gym.spaces.Box(0, 1, (2,), np.float32)
    turn = game.reset(seed=0)
    assert turn.obs[0].shape == (2,) and turn.masks[0].tolist() == [False, False, True, False]
    with pytest.raises(IllegalActionError, match="not legal; legal actions: \\[2\\]"):
        game.step({0: 1})
    assert env.actions == []
    game.step({0: 2})
    game.step({0: 2})
    last = game.step({0: 2})
    assert last.truncated and last.final_obs[0].tolist() == [1.0, 1.0]
