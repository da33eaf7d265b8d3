"""``NetworkConfig(actor_inputs=N)``: the actor reads the first N features, the critic all of
them, so information meant for the critic alone never changes what the policy plays."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import NetworkConfig, Policy

OBS = gym.spaces.Box(-1.0, 1.0, (10,), np.float32)


def policy(**network) -> Policy:
    """A small seeded policy over 10 features and 3 actions."""
    return Policy(OBS, gym.spaces.Discrete(3), NetworkConfig(hidden=(16, 16), **network), seed=0)


def test_the_actor_ignores_the_critics_features_and_the_critic_reads_them() -> None:
    net = policy(actor_inputs=4)
    obs = torch.randn(64, 10)
    other = obs.clone()
    other[:, 4:] = torch.randn(64, 6)
    (logits, values), (logits2, values2) = net.model(obs), net.model(other)
    assert torch.equal(logits, logits2)
    assert (values - values2).abs().max() > 1e-3
    np.testing.assert_allclose(net.action_probs(obs.numpy()), net.action_probs(other.numpy()))


def test_fused_acting_agrees_with_the_towers() -> None:
    net = policy(actor_inputs=4)
    obs = torch.randn(32, 10)
    logits, values = net.model(obs)
    fused = net._fused(obs)
    assert net._fused.supported
    torch.testing.assert_close(fused[:, :3], logits, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(fused[:, 3], values, atol=1e-5, rtol=1e-5)


def test_the_actor_has_weights_for_its_inputs_only() -> None:
    first = policy(actor_inputs=4).model.actor.linears()[0]
    assert first.in_features == 4
    assert policy().model.actor.linears()[0].in_features == 10


@pytest.mark.parametrize("network, match", [
    ({"actor_inputs": 10}, "more features"),
    ({"actor_inputs": -1}, ">= 0"),
    ({"actor_inputs": 4, "lstm": 8}, "lstm or shared"),
    ({"actor_inputs": 4, "shared": True}, "lstm or shared"),
])
def test_impossible_splits_are_refused(network, match) -> None:
    with pytest.raises(ConfigError, match=match):
        policy(**network)


def test_image_observations_need_flatten_for_a_split() -> None:
    image = gym.spaces.Box(0, 255, (6, 7, 3), np.uint8)
    with pytest.raises(ConfigError, match="flatten"):
        Policy(image, gym.spaces.Discrete(7), NetworkConfig(actor_inputs=10), seed=0)
    flat = Policy(image, gym.spaces.Discrete(7), NetworkConfig(actor_inputs=42, flatten=True))
    assert flat.model.actor.linears()[0].in_features == 42
