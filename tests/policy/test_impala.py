"""IMPALA: V-trace targets from the fragments, an update that moves the weights, off-policy
fragments corrected, and a non-finite fragment refused."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from msagent.errors import NonFiniteError
from msagent.policy import NetworkConfig, Policy, PPOConfig
from msagent.policy.algorithms.impala import ALGORITHMS, IMPALA
from msagent.policy.algorithms.base import stack_fragments
from tests.policy.helpers import acted_fragment

OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)


def setup(seed: int = 0):
    """A policy, IMPALA on it, and four fragments it acted."""
    policy = Policy(OBS, gym.spaces.Discrete(2), NetworkConfig(hidden=(16,)), seed=seed)
    rng = np.random.default_rng(seed)
    frags = [acted_fragment(policy, rng.uniform(-1, 1, (8, 4)).astype(np.float32), seed=i)
             for i in range(4)]
    return policy, IMPALA(policy, PPOConfig(epochs=1, minibatches=2, lr=1e-2)), frags


def test_on_policy_vtrace_targets_are_the_discounted_returns_of_the_fragment():
    policy, impala, frags = setup()
    batch = stack_fragments(frags)
    logp, _, values = policy.evaluate(batch["obs"].flatten(0, 1), batch["actions"].flatten(0, 1))
    vs, _ = impala._targets(batch, batch["logp"], values.detach().view(4, 8))
    # on-policy with rho = c = 1: v_s is the lambda=1 return bootstrapped at the fragment end
    rewards, gamma = batch["rewards"][0], impala.config.gamma
    want = batch["bootstrap_value"][0]
    for t in reversed(range(8)):
        want = rewards[t] + gamma * want
    assert float(vs[0, 0]) == pytest.approx(float(want), rel=1e-4)


def test_an_update_moves_the_weights_and_reports_finite_losses():
    policy, impala, frags = setup()
    before = {k: v.copy() for k, v in policy.get_weights().items()}
    stats = impala.update(frags)
    assert all(np.isfinite(v) for v in stats.values())
    assert any(not np.array_equal(before[k], v) for k, v in policy.get_weights().items())


def test_stale_fragments_are_down_weighted_by_truncated_importance_weights():
    policy, impala, frags = setup()
    batch = stack_fragments(frags)
    current = batch["logp"]
    unlikely = current - 5.0  # the learner's policy now finds the actions e^5 times less likely
    _, fresh_adv = impala._targets(batch, current, batch["values"])
    _, stale_adv = impala._targets(batch, unlikely, batch["values"])
    assert float(stale_adv.abs().sum()) < 0.05 * float(fresh_adv.abs().sum())


def test_non_finite_fragments_are_refused():
    policy, impala, frags = setup()
    frags[1].rewards[2] = np.nan
    with pytest.raises(NonFiniteError, match="rewards"):
        impala.update(frags)


def test_the_registry_names_both_algorithms():
    assert set(ALGORITHMS) == {"ppo", "impala", "bc"}
