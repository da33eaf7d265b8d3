"""``NetworkConfig(shared=True)``: one CNN under the actor and the critic head."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import PPO, ActionSpec, NetworkConfig, Policy, PPOConfig
from msagent.policy import operators as ops
from tests.policy.helpers import acted_fragment

SHAPE = (42, 42, 4)


def _shared(seed: int = 0) -> Policy:
    return Policy(SHAPE, ActionSpec.discrete(6), NetworkConfig(shared=True), seed=seed)


def _frames(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (n, *SHAPE), dtype=np.uint8)


def test_the_torso_is_one_module_stored_once() -> None:
    shared, separate = _shared(), Policy(SHAPE, ActionSpec.discrete(6), seed=0)
    names = set(shared.get_weights())
    assert any(n.startswith("torso.") for n in names)
    assert not any(n.startswith(("actor.", "critic.")) for n in names)
    count = sum(p.numel() for p in shared.model.parameters())
    assert count < 0.6 * sum(p.numel() for p in separate.model.parameters())
    assert shared.model.actor[0] is shared.model.critic[0] is shared.model.torso


def test_both_losses_train_the_torso_and_only_their_own_head() -> None:
    policy = _shared()
    ppo = PPO(policy, PPOConfig(normalize_advantages=False))
    batch = ppo.prepare([acted_fragment(policy, _frames(8, s), s) for s in range(2)])
    logp, _, values = policy.evaluate(batch["obs"], batch["actions"])
    ops.value_loss(values, batch["returns"]).backward(retain_graph=True)
    model = policy.model
    assert all(p.grad is None for p in model.actor_head.parameters())
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.torso.parameters()
               if p.dim() > 1)
    model.zero_grad(set_to_none=True)
    logp = logp + 0.1 * torch.randn_like(logp)  # off-policy, so the clip passes a gradient
    ops.ppo_clip_loss(logp, batch["logp"], batch["advantages"], 0.2).backward()
    assert all(p.grad is None for p in model.critic_head.parameters())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.torso.parameters())


def test_acting_agrees_with_evaluate_and_weights_round_trip() -> None:
    policy, copy = _shared(0), _shared(1)
    obs = _frames(5)
    out = policy.act(obs)
    logp, _, values = policy.evaluate(obs, out.actions)
    np.testing.assert_allclose(out.logp, logp.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.values, values.detach().numpy(), rtol=1e-5, atol=1e-6)
    frozen = policy.act(obs, deterministic=True, values=False).actions  # the actor view alone
    copy.set_weights(policy.get_weights())
    np.testing.assert_array_equal(copy.act(obs, deterministic=True).actions, frozen)


@pytest.mark.parametrize("shape, network", [
    ((8,), NetworkConfig(shared=True)),
    (SHAPE, NetworkConfig(shared=True, lstm=16)),
])
def test_a_shared_torso_needs_images_and_no_lstm(shape, network) -> None:
    with pytest.raises(ConfigError, match=r"shared=True\) needs image observations"):
        Policy(shape, ActionSpec.discrete(3), network)
