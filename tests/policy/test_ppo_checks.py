"""PPO refuses non-finite data, losses and gradients without moving, and refuses bad settings."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import Tensor

from msagent.errors import ConfigError, NonFiniteError
from msagent.policy import PPO, ActionSpec, Policy, PPOConfig
from msagent.vocabulary import Fragment
from tests.policy.helpers import acted_fragment

torch.set_num_threads(1)


def _fragment(policy: Policy, seed: int, t_len: int = 8) -> Fragment:
    """A fragment acted by ``policy`` on random observations."""
    obs = np.random.default_rng(seed).standard_normal((t_len, 4)).astype(np.float32)
    return acted_fragment(policy, obs, seed)


def _trained(config: PPOConfig | None = None, cls: type[PPO] = PPO) -> tuple[PPO, list]:
    """A PPO after one normal update (so Adam has state), and fresh fragments."""
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    ppo = cls(policy, config or PPOConfig(minibatches=2))
    ppo.update([_fragment(policy, s) for s in range(4)])
    return ppo, [_fragment(policy, s) for s in range(4, 8)]


def _snapshot(ppo: PPO) -> tuple[dict, dict]:
    """Weights and optimizer state as bytes, to compare bit for bit."""
    weights = {k: v.tobytes() for k, v in ppo.policy.get_weights().items()}
    adam = {(i, k): v.numpy().tobytes() if isinstance(v, Tensor) else v
            for i, state in ppo.optimizer.state_dict()["state"].items() for k, v in state.items()}
    return weights, adam


def _assert_refused_without_moving(ppo: PPO, fragments: list, message: str) -> None:
    """The update raises NonFiniteError with exactly ``message``; nothing changed."""
    before, updates = _snapshot(ppo), ppo.updates
    with pytest.raises(NonFiniteError) as info:
        ppo.update(fragments)
    assert str(info.value) == message
    assert _snapshot(ppo) == before and ppo.updates == updates


def test_nan_reward_is_refused_before_any_step() -> None:
    ppo, fragments = _trained()
    fragments[1].rewards[3] = np.nan
    _assert_refused_without_moving(ppo, fragments, (
        "non-finite rewards in the fragments of update 2: rewards[fragment 1, step 3] = nan "
        "(1 of 32 values); the update was refused, the weights and optimizer state kept"))


def test_nan_observation_is_refused_naming_the_element() -> None:
    ppo, fragments = _trained()
    fragments[0].obs[2, 1] = np.inf
    _assert_refused_without_moving(ppo, fragments, (
        "non-finite obs in the fragments of update 2: obs[fragment 0, step 2, 1] = inf "
        "(1 of 128 values); the update was refused, the weights and optimizer state kept"))


class _NanLossPPO(PPO):
    """Returns a NaN loss from the ``nan_at``-th minibatch of an update on (0 = first)."""

    nan_at: int | None = None
    calls = 0

    def compute_loss(self, batch: dict[str, Tensor]) -> tuple[Tensor, dict[str, Tensor]]:
        """The PPO loss, made NaN once armed."""
        loss, stats = super().compute_loss(batch)
        self.calls += 1
        if self.nan_at is not None and self.calls > self.nan_at:
            loss = loss * torch.tensor(math.nan)
        return loss, stats


def test_nan_loss_on_the_first_minibatch_is_refused() -> None:
    ppo, fragments = _trained(cls=_NanLossPPO)
    ppo.nan_at, ppo.calls = 0, 0
    _assert_refused_without_moving(ppo, fragments, (
        "non-finite loss = nan in update 2 (epoch 1/4, minibatch 1/2): the step was refused, "
        "the weights and optimizer state kept"))
    assert all(p.grad is None for p in ppo.policy.model.parameters())


def test_nan_loss_later_says_how_many_steps_were_applied() -> None:
    ppo, fragments = _trained(cls=_NanLossPPO)
    ppo.nan_at, ppo.calls = 3, 0
    with pytest.raises(NonFiniteError) as info:
        ppo.update(fragments)
    assert str(info.value) == (
        "non-finite loss = nan in update 2 (epoch 2/4, minibatch 2/2): the step was refused, "
        "the weights and optimizer state kept; the 3 earlier minibatch steps of this update "
        "were applied")


class _NanGradPPO(PPO):
    """A finite loss whose gradient is NaN (sqrt's slope at 0 is infinite, times 0)."""

    def compute_loss(self, batch: dict[str, Tensor]) -> tuple[Tensor, dict[str, Tensor]]:
        """The PPO loss plus a term that is 0 but has a NaN gradient."""
        loss, stats = super().compute_loss(batch)
        if getattr(self, "armed", False):
            weight = self.policy.model.critic[0].weight
            loss = loss + torch.sqrt(0.0 * weight.sum())
        return loss, stats


@pytest.mark.parametrize("max_grad_norm", [0.5, None])
def test_nan_gradient_is_refused_with_or_without_clipping(max_grad_norm: float | None) -> None:
    ppo, fragments = _trained(PPOConfig(minibatches=2, max_grad_norm=max_grad_norm), _NanGradPPO)
    ppo.armed = True
    before = _snapshot(ppo)
    with pytest.raises(NonFiniteError) as info:
        ppo.update(fragments)
    assert str(info.value).startswith(
        "non-finite gradient: total grad norm = nan (loss = ")
    assert str(info.value).endswith(
        ") in update 2 (epoch 1/4, minibatch 1/2): the step was refused, the weights and "
        "optimizer state kept")
    assert _snapshot(ppo) == before
    assert all(p.grad is None for p in ppo.policy.model.parameters())


def test_finite_updates_still_report_statistics() -> None:
    ppo, fragments = _trained(PPOConfig(minibatches=2, max_grad_norm=None))
    stats = ppo.update(fragments)
    assert ppo.updates == 2 and math.isfinite(stats["losses/policy"])


@pytest.mark.parametrize(("field", "value", "message"), [
    ("lr", -1.0, "lr must be > 0, got -1.0"),
    ("lr", 0.0, "lr must be > 0, got 0.0"),
    ("lr", math.nan, "lr must be a finite number > 0, got nan"),
    ("clip", 0.0, "clip must be > 0, got 0.0"),
    ("vf_clip", -0.1, "vf_clip must be > 0, got -0.1"),
    ("gamma", 0.0, "gamma must be in (0, 1], got 0.0"),
    ("gamma", 1.5, "gamma must be in (0, 1], got 1.5"),
    ("gae_lambda", -0.5, "gae_lambda must be in [0, 1], got -0.5"),
    ("vf_coef", -1.0, "vf_coef must be >= 0, got -1.0"),
    ("ent_coef", -0.01, "ent_coef must be >= 0, got -0.01"),
    ("max_grad_norm", 0.0, "max_grad_norm must be > 0, got 0.0"),
    ("adam_eps", 0.0, "adam_eps must be > 0, got 0.0"),
    ("total_updates", 0, "total_updates must be >= 1, got 0"),
    ("target_kl", -0.02, "target_kl must be > 0, got -0.02"),
    ("epochs", 0, "epochs must be >= 1, got 0"),
    ("minibatches", 0, "minibatches must be >= 1, got 0"),
])
def test_out_of_range_settings_name_field_and_value(field: str, value: float, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        PPOConfig(**{field: value})
    assert str(info.value) == message


def test_every_range_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as info:
        PPOConfig(lr=-1.0, epochs=0)
    assert str(info.value) == "lr must be > 0, got -1.0; epochs must be >= 1, got 0"


def test_edges_of_the_ranges_are_accepted() -> None:
    config = PPOConfig(gamma=1.0, gae_lambda=0.0, ent_coef=0.0, vf_coef=0.0, vf_clip=None,
                       max_grad_norm=None, target_kl=None, total_updates=1, epochs=1)
    assert config.gamma == 1.0 and config.gae_lambda == 0.0
