"""MultiDiscrete actions: a spec from the space, the factored categorical against torch's own
distributions, masks per component, and the refusals (2-d, not starting at 0, symmetries,
tabular probabilities)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch.distributions import Categorical

from msagent.errors import ConfigError, ScriptError
from msagent.policy import NetworkConfig, Policy
from msagent.policy import operators as ops
from msagent.policy.spaces import ActionSpec
from msagent.policy.symmetry import Symmetry

NVEC = (3, 2, 4)
OBS = gym.spaces.Box(-1, 1, (6,), np.float32)


def policy(seed: int = 0) -> Policy:
    """A small MLP over MultiDiscrete([3, 2, 4])."""
    return Policy(OBS, gym.spaces.MultiDiscrete(NVEC), NetworkConfig(hidden=(16,)), seed=seed)


def test_the_spec_of_a_multi_discrete_space_is_its_components_side_by_side() -> None:
    spec = ActionSpec.from_space(gym.spaces.MultiDiscrete(NVEC))
    assert spec.nvec == NVEC and spec.size == 9 and spec.multi and not spec.continuous
    assert not ActionSpec.from_space(gym.spaces.Discrete(3)).multi
    assert ActionSpec.from_space(gym.spaces.MultiBinary(4)) == ActionSpec.multi_discrete((2,) * 4)


@pytest.mark.parametrize(("space", "words"), [
    (gym.spaces.MultiDiscrete([[2, 3], [2, 3]]), "1-d MultiDiscrete"),
    (gym.spaces.MultiDiscrete([3, 2], start=[1, 0]), "must start at 0"),
])
def test_other_multi_discrete_spaces_are_refused_with_the_reason(space, words: str) -> None:
    with pytest.raises(ScriptError, match=words):
        ActionSpec.from_space(space)


def test_log_probs_and_entropy_are_the_sums_of_torch_s_categoricals() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(5, sum(NVEC), generator=gen)
    actions = torch.stack([torch.randint(n, (5,), generator=gen) for n in NVEC], dim=-1)
    parts = torch.split(logits, NVEC, dim=-1)
    logp = sum(Categorical(logits=p).log_prob(actions[:, i]) for i, p in enumerate(parts))
    entropy = sum(Categorical(logits=p).entropy() for p in parts)
    assert torch.allclose(ops.multi_categorical_log_prob(logits, actions, NVEC), logp)
    assert torch.allclose(ops.multi_categorical_entropy(logits, NVEC), entropy)


def test_sampling_follows_each_component_s_softmax() -> None:
    logits = torch.tensor([[2.0, 0.0, -1.0, 0.5, -0.5, 0.0, 1.0, -2.0, 0.3]]).repeat(20_000, 1)
    draws = ops.multi_categorical_sample(logits, NVEC, torch.Generator().manual_seed(1))
    assert draws.shape == (20_000, 3) and draws.dtype == torch.int64
    for i, part in enumerate(torch.split(logits[0], NVEC)):
        seen = torch.bincount(draws[:, i], minlength=len(part)).float() / len(draws)
        assert torch.allclose(seen, torch.softmax(part, -1), atol=0.015), (i, seen)


def test_acting_keeps_each_component_s_mask_and_evaluate_gives_the_same_log_probs() -> None:
    pol, obs = policy(), np.random.default_rng(0).normal(size=(400, 6)).astype(np.float32)
    mask = np.ones((400, 9), bool)
    mask[:, [0, 2]] = False  # colour 1 only
    mask[:, 5 + 3] = False  # never the last of the third component
    out = pol.act(obs, mask)
    assert out.actions.shape == (400, 3) and out.actions.dtype == np.int64
    assert (out.actions[:, 0] == 1).all() and (out.actions[:, 2] != 3).all()
    assert set(out.actions[:, 1]) == {0, 1} and set(out.actions[:, 2]) == {0, 1, 2}
    logp, entropy, _ = pol.evaluate(obs, out.actions, mask)
    np.testing.assert_allclose(logp.detach().numpy(), out.logp, rtol=1e-5, atol=1e-6)
    assert (entropy.detach().numpy() < np.log(1 * 2 * 3) + 1e-5).all()


def test_greedy_acting_takes_each_component_s_most_likely_choice() -> None:
    pol, obs = policy(), np.random.default_rng(1).normal(size=(50, 6)).astype(np.float32)
    logits = pol.model.actor(torch.from_numpy(obs)).detach()
    expected = np.stack([p.argmax(-1).numpy() for p in torch.split(logits, NVEC, -1)], -1)
    np.testing.assert_array_equal(pol.act(obs, deterministic=True).actions, expected)


def test_symmetries_and_tabular_probabilities_are_refused() -> None:
    flip = Symmetry(flip_obs_axes=(0,), action_permutation=tuple(range(9)))
    with pytest.raises(ConfigError, match="multi-discrete"):
        Policy(OBS, gym.spaces.MultiDiscrete(NVEC), symmetries=[flip])
    with pytest.raises(ValueError, match="Discrete actions"):
        policy().action_probs(np.zeros((1, 6), np.float32))
