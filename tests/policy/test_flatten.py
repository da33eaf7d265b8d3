"""NetworkConfig(flatten=True): board planes fed to an MLP, in acting and in PPO updates."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from msagent.policy import PPO, NetworkConfig, Policy, PPOConfig
from msagent.vocabulary import Fragment, ModelKey

SPACE = gym.spaces.Box(0, 1, (6, 7, 2), np.int8)


def test_a_flattening_policy_acts_on_planes_with_an_mlp_and_respects_masks() -> None:
    policy = Policy(SPACE, gym.spaces.Discrete(7), NetworkConfig(flatten=True), seed=0)
    assert policy.obs_shape == (84,)
    obs = np.zeros((5, 6, 7, 2), np.int8)
    mask = np.zeros((5, 7), bool)
    mask[:, 3] = True
    out = policy.act(obs, mask)
    assert out.actions.tolist() == [3] * 5 and out.values.shape == (5,)


def test_ppo_updates_a_flattening_policy_from_fragments_of_planes() -> None:
    policy = Policy(SPACE, gym.spaces.Discrete(7), NetworkConfig(flatten=True), seed=0)
    ppo = PPO(policy, PPOConfig(epochs=1, minibatches=1))
    rng = np.random.default_rng(0)
    t = 8
    frags = [Fragment(obs=rng.integers(0, 2, (t, 6, 7, 2)).astype(np.int8),
                      actions=rng.integers(0, 7, t), logp=np.full(t, -1.9, np.float32),
                      values=np.zeros(t, np.float32), rewards=rng.normal(size=t).astype(np.float32),
                      terminated=np.zeros(t, bool), truncated=np.zeros(t, bool),
                      final_values=np.zeros(t, np.float32), bootstrap_value=0.0,
                      policy=ModelKey("main", 1), action_mask=np.ones((t, 7), bool))
             for _ in range(4)]
    before = {k: v.copy() for k, v in policy.get_weights().items()}
    stats = ppo.update(frags)
    assert np.isfinite(stats["losses/policy"] if "losses/policy" in stats else
                       next(iter(stats.values())))
    assert any(not np.array_equal(before[k], v) for k, v in policy.get_weights().items())


def test_acting_without_the_critic_picks_the_same_greedy_actions_and_returns_zero_values() -> None:
    policy = Policy(SPACE, gym.spaces.Discrete(7), NetworkConfig(flatten=True), seed=1)
    obs = np.random.default_rng(0).integers(0, 2, (16, 6, 7, 2)).astype(np.int8)
    full = policy.act(obs, deterministic=True)
    lean = policy.act(obs, deterministic=True, values=False)
    assert np.array_equal(full.actions, lean.actions)
    np.testing.assert_allclose(full.logp, lean.logp, atol=1e-5)
    assert not lean.values.any() and full.values.any()
