"""PPO's magnet (``magnet_coef``): a KL term toward a slowly following copy of the network,
moved by ``magnet_rate`` after each update, kept in the checkpoint, forgotten at a reset."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import PPO, ActionSpec, Policy, PPOConfig
from msagent.policy.algorithms.impala import IMPALA
from tests.policy.helpers import acted_fragment

torch.set_num_threads(1)


def _setup(config: PPOConfig) -> tuple[PPO, list]:
    """A PPO on a tiny policy and two fragments to update on."""
    policy = Policy((4,), ActionSpec.discrete(3), seed=0)
    obs = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
    return PPO(policy, config), [acted_fragment(policy, obs, s) for s in range(2)]


def _params(module: torch.nn.Module) -> list[torch.Tensor]:
    """Copies of a module's parameters."""
    return [p.detach().clone() for p in module.parameters()]


def test_the_magnet_follows_the_policy_by_its_rate_after_each_update() -> None:
    ppo, fragments = _setup(PPOConfig(lr=1e-2, minibatches=1, magnet_coef=0.5,
                                      magnet_rate=0.25))
    start = _params(ppo.policy.model)
    stats = ppo.update(fragments)
    assert stats["losses/kl_to_magnet"] >= 0.0
    moved = _params(ppo.policy.model)
    for slow, before, after in zip(ppo.magnet.parameters(), start, moved):
        # the magnet was the network before the update; it moved a quarter of the way
        torch.testing.assert_close(slow, before + 0.25 * (after - before))
    assert any(not torch.equal(a, b) for a, b in zip(start, moved))


def test_a_strong_magnet_holds_the_policy_near_it() -> None:
    """With every update, a large coefficient keeps the policy's KL from its magnet smaller."""
    kls = {}
    for coef in (0.0, 5.0):
        ppo, fragments = _setup(PPOConfig(lr=3e-2, minibatches=1, epochs=8, magnet_coef=coef,
                                          magnet_rate=0.01))
        reference = Policy((4,), ActionSpec.discrete(3), seed=0)  # the untrained network
        for _ in range(10):
            ppo.update(fragments)
        obs = fragments[0].obs
        p, q = ppo.policy.action_probs(obs), reference.action_probs(obs)
        kls[coef] = float((p * np.log(p / q)).sum(axis=1).mean())
    assert kls[5.0] < 0.5 * kls[0.0], kls


def test_the_magnet_is_kept_in_the_state_and_forgotten_at_a_reset() -> None:
    config = PPOConfig(lr=1e-2, minibatches=1, magnet_coef=0.5, magnet_rate=0.5)
    ppo, fragments = _setup(config)
    ppo.update(fragments)
    state = ppo.state_dict()
    other, _ = _setup(config)
    other.load_state_dict(state)
    for a, b in zip(other.magnet.parameters(), ppo.magnet.parameters()):
        torch.testing.assert_close(a, b)
    ppo.reset_optimizer()  # a league reset: the magnet starts again from the loaded weights
    assert ppo.magnet is None
    ppo.update(fragments)
    assert ppo.magnet is not None
    assert "magnet" not in PPO(ppo.policy, PPOConfig()).state_dict()  # off: nothing kept


def test_bad_magnet_settings_and_impala_are_refused() -> None:
    with pytest.raises(ConfigError, match="magnet_rate must be in \\(0, 1\\]"):
        PPOConfig(magnet_rate=0.0)
    with pytest.raises(ConfigError, match="magnet_coef must be >= 0"):
        PPOConfig(magnet_coef=-1.0)
    with pytest.raises(ConfigError, match="IMPALA has none"):
        IMPALA(Policy((4,), ActionSpec.discrete(3), seed=0), PPOConfig(magnet_coef=0.1))
