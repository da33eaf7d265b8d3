"""Behaviour cloning: it learns a teacher's rule from data it did not act, fits the value head
to the data's returns, and refuses non-finite data like every algorithm."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.errors import NonFiniteError
from msagent.policy import NetworkConfig, Policy, PPOConfig
from msagent.policy.algorithms.bc import BehaviourCloning
from msagent.vocabulary import Fragment, ModelKey

OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)


def teacher_fragment(rng: np.random.Generator, t_len: int = 16) -> Fragment:
    """Steps of a teacher that takes action 1 exactly when obs[0] + obs[1] > 0; reward 1."""
    obs = rng.uniform(-1, 1, (t_len, 4)).astype(np.float32)
    actions = (obs[:, 0] + obs[:, 1] > 0).astype(np.int64)
    zeros = np.zeros(t_len, np.float32)
    return Fragment(obs=obs, actions=actions, logp=zeros, values=zeros,
                    rewards=np.ones(t_len, np.float32), terminated=np.zeros(t_len, bool),
                    truncated=np.zeros(t_len, bool), final_values=zeros, bootstrap_value=0.0,
                    policy=ModelKey("clients", 0))


@pytest.mark.slow
def test_cloning_learns_the_teachers_rule_from_data_it_did_not_act():
    policy = Policy(OBS, gym.spaces.Discrete(2), NetworkConfig(hidden=(32,)), seed=0)
    bc = BehaviourCloning(policy, PPOConfig(epochs=4, minibatches=4, lr=3e-3, ent_coef=0.0))
    rng = np.random.default_rng(0)
    for _ in range(40):
        stats = bc.update([teacher_fragment(rng) for _ in range(8)])
    test = rng.uniform(-1, 1, (2000, 4)).astype(np.float32)
    chosen = policy.action_probs(test).argmax(-1)
    agreement = float((chosen == (test[:, 0] + test[:, 1] > 0)).mean())
    assert agreement > 0.95
    assert stats["losses/action_match"] > 0.9


def test_the_value_head_is_fitted_to_the_datas_discounted_returns():
    policy = Policy(OBS, gym.spaces.Discrete(2), NetworkConfig(hidden=(32,)), seed=1)
    bc = BehaviourCloning(policy, PPOConfig(epochs=4, minibatches=2, lr=3e-3, gamma=0.5))
    rng = np.random.default_rng(1)
    first = bc.update([teacher_fragment(rng) for _ in range(8)])["losses/value"]
    for _ in range(30):
        last = bc.update([teacher_fragment(rng) for _ in range(8)])["losses/value"]
    assert last < 0.2 * first


def test_non_finite_data_is_refused_and_the_weights_kept():
    policy = Policy(OBS, gym.spaces.Discrete(2), NetworkConfig(hidden=(8,)), seed=2)
    bc = BehaviourCloning(policy, PPOConfig(epochs=1, minibatches=1))
    frags = [teacher_fragment(np.random.default_rng(2)) for _ in range(2)]
    frags[1].obs[3, 2] = np.inf
    before = {k: v.copy() for k, v in policy.get_weights().items()}
    with pytest.raises(NonFiniteError, match="obs"):
        bc.update(frags)
    assert all(np.array_equal(before[k], v) for k, v in policy.get_weights().items())
