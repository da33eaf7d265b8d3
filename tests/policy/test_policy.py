"""Policy: weights round trip, acting determinism, masks, and actor/critic gradient separation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from msagent.errors import ConfigError, ScriptError
from msagent.policy import PPO, ActionSpec, LSTMCore, Policy, PPOConfig
from msagent.policy import operators as ops
from tests.policy.helpers import acted_fragment
from msagent.vocabulary import Fragment

torch.set_num_threads(1)


def _obs(n: int = 16, dim: int = 4, seed: int = 0) -> np.ndarray:
    """Random float32 observations."""
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_weights_round_trip_is_bit_exact() -> None:
    source = Policy((4,), ActionSpec.discrete(2), seed=0)
    target = Policy((4,), ActionSpec.discrete(2), seed=1)
    weights = source.get_weights()
    assert all(isinstance(w, np.ndarray) and w.flags.c_contiguous for w in weights.values())
    target.set_weights(weights)
    back = target.get_weights()
    assert back.keys() == weights.keys()
    assert all(back[k].tobytes() == weights[k].tobytes() for k in weights)
    obs = _obs()
    np.testing.assert_array_equal(
        source.act(obs, deterministic=True).values, target.act(obs, deterministic=True).values
    )


def test_get_weights_returns_copies() -> None:
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    weights = policy.get_weights()
    before = policy.act(_obs(), deterministic=True).values.copy()
    for w in weights.values():
        w[...] = 0.0
    np.testing.assert_array_equal(policy.act(_obs(), deterministic=True).values, before)


def test_set_weights_changes_acting_and_rejects_mismatches() -> None:
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    other = Policy((4,), ActionSpec.discrete(2), seed=3)
    obs = _obs()
    policy.act(obs)  # build the fused acting cache before the weights change
    policy.set_weights(other.get_weights())
    np.testing.assert_array_equal(policy.act(obs, deterministic=True).values,
                                  other.act(obs, deterministic=True).values)
    weights = other.get_weights()
    with pytest.raises(ConfigError):
        policy.set_weights({k: v for k, v in list(weights.items())[1:]})
    weights["actor.0.weight"] = np.zeros((3, 3), np.float32)
    with pytest.raises(ConfigError):
        policy.set_weights(weights)


def test_deterministic_act_is_repeatable_and_sampling_is_seeded() -> None:
    obs = _obs(256)
    policy = Policy((4,), ActionSpec.discrete(3), seed=0)
    first, second = policy.act(obs, deterministic=True), policy.act(obs, deterministic=True)
    np.testing.assert_array_equal(first.actions, second.actions)
    np.testing.assert_array_equal(first.logp, second.logp)
    sampled_a = Policy((4,), ActionSpec.discrete(3), seed=5).act(obs).actions
    sampled_b = Policy((4,), ActionSpec.discrete(3), seed=5).act(obs).actions
    np.testing.assert_array_equal(sampled_a, sampled_b)
    assert first.actions.shape == first.logp.shape == first.values.shape == (256,)


def test_act_agrees_with_evaluate() -> None:
    policy = Policy((4,), ActionSpec.discrete(3), seed=0)
    obs = _obs(64)
    out = policy.act(obs)
    logp, entropy, values = policy.evaluate(obs, out.actions)
    np.testing.assert_allclose(out.logp, logp.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.values, values.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert (entropy > 0).all() and (entropy <= np.log(3) + 1e-6).all()


def test_act_never_picks_masked_actions() -> None:
    policy = Policy((4,), ActionSpec.discrete(4), seed=0)
    mask = np.zeros((512, 4), dtype=bool)
    mask[np.arange(512), np.random.default_rng(0).integers(0, 4, 512)] = True
    mask[::2, 3] = True
    for _ in range(10):
        out = policy.act(_obs(512), action_mask=mask)
        assert mask[np.arange(512), out.actions].all()
    only = np.flatnonzero(mask.sum(1) == 1)
    np.testing.assert_allclose(out.logp[only], 0.0, atol=1e-6)  # a forced action has p = 1


def _fake_fragment(policy: Policy, t_len: int = 8, seed: int = 0) -> Fragment:
    """A fragment acted by ``policy`` on random observations."""
    return acted_fragment(policy, _obs(t_len, seed=seed), seed)


def test_policy_loss_touches_only_policy_parameters() -> None:
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    ppo = PPO(policy, PPOConfig(normalize_advantages=False))
    batch = ppo.prepare([_fake_fragment(policy, seed=s) for s in range(4)])
    logp, _, values = policy.evaluate(batch["obs"], batch["actions"])
    logp = logp + 0.1 * torch.randn_like(logp)  # move off-policy so the clip matters
    ops.ppo_clip_loss(logp, batch["logp"], batch["advantages"], 0.2).backward(retain_graph=True)
    assert all(p.grad is None for p in policy.value_parameters())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in policy.policy_parameters())
    policy.model.zero_grad(set_to_none=True)
    ops.value_loss(values, batch["returns"]).backward()
    assert all(p.grad is None for p in policy.policy_parameters())
    assert all(p.grad is not None for p in policy.value_parameters())


def test_continuous_policy_from_gym_space() -> None:
    space = gym.spaces.Box(low=-2.0, high=2.0, shape=(3,), dtype=np.float32)
    policy = Policy((5,), space, seed=0)
    assert policy.action_spec == ActionSpec(3, True, (-2.0,) * 3, (2.0,) * 3)
    out = policy.act(_obs(32, dim=5))
    assert out.actions.shape == (32, 3) and out.logp.shape == (32,)
    logp, entropy, _ = policy.evaluate(_obs(32, dim=5), out.actions)
    np.testing.assert_allclose(out.logp, logp.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert entropy.shape == (32,)
    clipped = policy.clip_actions(np.full((1, 3), 9.0, np.float32))
    np.testing.assert_array_equal(clipped, np.full((1, 3), 2.0, np.float32))
    assert any(p is policy.model.log_std for p in policy.policy_parameters())


def test_gym_spaces_and_unsupported_spaces() -> None:
    env = gym.make("CartPole-v1")
    policy = Policy(env.observation_space, env.action_space, seed=0)
    assert policy.obs_shape == (4,) and policy.action_spec == ActionSpec.discrete(2)
    with pytest.raises(ScriptError, match=r"unsupported action space Box\(0\.0, 1\.0, \(2, 2\)"):
        ActionSpec.from_space(gym.spaces.Box(0.0, 1.0, shape=(2, 2)))
    with pytest.raises(ScriptError, match=r"Discrete\(3, start=1\).*must start at 0"):
        ActionSpec.from_space(gym.spaces.Discrete(3, start=1))


@pytest.mark.parametrize("shape", [(84, 84, 4), (7, 7, 3)])
def test_image_policy_acts_on_channels_last_bytes(shape: tuple[int, int, int]) -> None:
    policy = Policy(shape, ActionSpec.discrete(5), seed=0)
    obs = np.random.default_rng(0).integers(0, 255, (6, *shape), dtype=np.uint8)
    out = policy.act(obs)
    assert out.actions.shape == (6,) and ((out.actions >= 0) & (out.actions < 5)).all()
    logp, _, values = policy.evaluate(obs, out.actions)
    np.testing.assert_allclose(out.values, values.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_act_rejects_wrong_observation_shape() -> None:
    with pytest.raises(ScriptError) as info:
        Policy((4,), ActionSpec.discrete(2)).act(_obs(3, dim=5))
    assert str(info.value) == ("observation batch has shape (3, 5); the policy expects "
                               "[N, *obs_shape] = [N, 4]")


def test_acting_sees_optimizer_updates() -> None:
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    obs = _obs()
    before = policy.act(obs, deterministic=True).values.copy()
    PPO(policy, PPOConfig(lr=1e-2)).update([_fake_fragment(policy, seed=s) for s in range(2)])
    after = policy.act(obs, deterministic=True).values
    _, _, fresh = policy.evaluate(obs, np.zeros(16, np.int64))
    assert not np.allclose(before, after)
    np.testing.assert_allclose(after, fresh.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_lstm_reset_equals_fresh_start() -> None:
    torch.manual_seed(0)
    core = LSTMCore(3, 8)
    x = torch.randn(2, 5, 3)
    resets = torch.zeros(2, 5, dtype=torch.bool)
    resets[:, 2] = True
    state = (torch.randn(2, 8), torch.randn(2, 8))
    out, _ = core(x, state, resets)
    fresh, _ = core(x[:, 2:], core.initial_state(2))
    torch.testing.assert_close(out[:, 2:], fresh)
    unreset, _ = core(x, state)
    assert not torch.allclose(unreset[:, 2:], fresh)


def test_acting_sees_in_place_parameter_changes_without_invalidation() -> None:
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    obs = _obs()
    policy.act(obs)  # build the acting cache
    optimizer = torch.optim.SGD(policy.model.parameters(), lr=0.1)  # bumps version counters
    _, _, values = policy.evaluate(obs, np.zeros(16, np.int64))
    values.square().mean().backward()
    optimizer.step()
    _, _, fresh = policy.evaluate(obs, np.zeros(16, np.int64))
    np.testing.assert_allclose(policy.act(obs).values, fresh.detach().numpy(), atol=1e-6)
