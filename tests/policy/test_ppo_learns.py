"""PPO really learns: CartPole-v1 acted like an env worker acts (Fragments), trained in-process."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from msagent.envs import policy_act, solo_collector
from msagent.policy import PPO, ActionSpec, Policy, PPOConfig
from msagent.vocabulary import Fragment, ModelKey

torch.set_num_threads(1)

_REFERENCE = Path(__file__).resolve().parents[2] / "benchmarks" / "ppo_reference.py"


def _reference() -> ModuleType:
    """Import ``benchmarks/ppo_reference.py`` (not a package) by path."""
    spec = importlib.util.spec_from_file_location("ppo_reference", _REFERENCE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _local(policy: Policy):
    """Act with a local policy, as an env worker in local inference mode does."""
    return policy_act(policy, ModelKey("main", 1))


@pytest.mark.slow
def test_ppo_solves_cartpole_with_the_reference_settings() -> None:
    ref = _reference()
    settings = dataclasses.replace(ref.CARTPOLE_REFERENCE, max_steps=300_000)
    result = ref.run(settings, seed=0)
    assert result.solved, result  # mean of the last 20 episode returns >= 475
    assert result.final_mean_return >= 475.0


class _Recording(gym.Wrapper):
    """Keeps every ``step`` result of one env, to check what the collector stored."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps: list[tuple] = []

    def step(self, action: Any) -> tuple:
        """Pass through and remember the result."""
        result = self.env.step(action)
        self.steps.append(result)
        return result


def test_collector_records_truncation_final_values() -> None:
    recorded = [_Recording(gym.make("CartPole-v1", max_episode_steps=7)) for _ in range(3)]
    made = iter(recorded)
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    collector = solo_collector(lambda: next(made), 3, _local(policy), length=20, seed=0)
    frags = collector.collect()
    assert sum(int(f.truncated.sum()) for f in frags) >= 3  # time limit 7 within 20 steps
    for frag, env in zip(frags, recorded, strict=True):
        for t, (obs, reward, terminated, truncated, _) in enumerate(env.steps[:20]):
            assert frag.rewards[t] == reward and frag.terminated[t] == terminated
            if truncated and not terminated:
                expected = policy.act(np.asarray(obs)[None]).values[0]
                assert frag.final_values[t] == pytest.approx(expected, abs=1e-6)
                assert expected != 0.0
            else:
                assert frag.final_values[t] == 0.0
    # the bootstrap value is V of the observation after the last step (the next decision's)
    pending = np.stack([slot.turn.obs[0] for slot in collector.slots])
    np.testing.assert_allclose([f.bootstrap_value for f in frags],
                               policy.act(pending).values, atol=1e-6)


def test_update_uses_acting_time_values_for_gae() -> None:
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    ppo = PPO(policy, PPOConfig(gamma=0.5, gae_lambda=1.0))
    t_len = 4
    frag = Fragment(
        obs=np.zeros((t_len, 4), np.float32), actions=np.zeros(t_len, np.int64),
        logp=np.full(t_len, np.log(0.5), np.float32), values=np.full(t_len, 10.0, np.float32),
        rewards=np.ones(t_len, np.float32), terminated=np.array([0, 0, 0, 1], bool),
        truncated=np.zeros(t_len, bool), final_values=np.zeros(t_len, np.float32),
        bootstrap_value=123.0, policy=ModelKey("main", 0),
    )
    batch = ppo.prepare([frag])
    # returns with gamma .5 and termination after the last step: [1.875, 1.75, 1.5, 1]
    np.testing.assert_allclose(batch["returns"].numpy(), [1.875, 1.75, 1.5, 1.0])
    # advantages come from the stored values (10), not from the untrained critic
    np.testing.assert_allclose(batch["advantages"].numpy(), np.array([1.875, 1.75, 1.5, 1.0]) - 10)


def test_ppo_state_dict_round_trip_resumes_identically() -> None:
    ref = _reference()
    settings = dataclasses.replace(ref.CARTPOLE_REFERENCE, num_envs=4, fragment_len=32)
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    collector = ref.make_collector(settings, policy, seed=0)
    first, second = collector.collect(), collector.collect()
    ppo = PPO(policy, PPOConfig(seed=3))
    ppo.update(first)
    weights, state = policy.get_weights(), ppo.state_dict()
    clone = Policy((4,), ActionSpec.discrete(2), seed=9)
    clone.set_weights(weights)
    resumed = PPO(clone, PPOConfig(seed=3))
    resumed.load_state_dict(state)
    assert ppo.update(second) == resumed.update(second)
    after, resumed_after = policy.get_weights(), clone.get_weights()
    assert all(np.array_equal(after[k], resumed_after[k]) for k in after)
