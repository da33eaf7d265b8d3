"""Hand-checked values for the tensor operators (returns, V-trace, losses, distributions)."""

from __future__ import annotations

import math

import pytest
import torch

from msagent.policy import operators as ops

torch.set_num_threads(1)

GAMMA, LAM = 0.9, 0.8  # gamma * lam = 0.72


def _row(*xs: float) -> torch.Tensor:
    """A [1, T] float tensor."""
    return torch.tensor([list(xs)], dtype=torch.float32)


def _flags(t_len: int, at: int | None) -> torch.Tensor:
    """A [1, T] bool tensor that is true only at step ``at``."""
    flags = torch.zeros(1, t_len, dtype=torch.bool)
    if at is not None:
        flags[0, at] = True
    return flags


def _gae(terminated_at: int | None, truncated_at: int | None, final: float = 0.0):
    """GAE on rewards [1,1,1], values [.5,.6,.7], bootstrap .8, final value at step 1."""
    return ops.gae(
        rewards=_row(1.0, 1.0, 1.0),
        values=_row(0.5, 0.6, 0.7),
        terminated=_flags(3, terminated_at),
        truncated=_flags(3, truncated_at),
        final_values=_row(0.0, final, 0.0),
        bootstrap_value=torch.tensor([0.8]),
        gamma=GAMMA,
        lam=LAM,
    )


def test_gae_without_episode_end_bootstraps_from_the_last_value() -> None:
    # deltas: d0 = 1 + .9*.6 - .5 = 1.04 ; d1 = 1 + .9*.7 - .6 = 1.03 ; d2 = 1 + .9*.8 - .7 = 1.02
    # A2 = 1.02 ; A1 = 1.03 + .72*1.02 = 1.7644 ; A0 = 1.04 + .72*1.7644 = 2.310368
    adv, ret = _gae(None, None)
    torch.testing.assert_close(adv, _row(2.310368, 1.7644, 1.02))
    torch.testing.assert_close(ret, _row(2.810368, 2.3644, 1.72))


def test_gae_termination_uses_zero_next_value_and_cuts_the_trace() -> None:
    # terminated after t=1: d1 = 1 + .9*0 - .6 = 0.4 and A1 = d1 (no trace from t=2)
    # A2 = 1.02 (new episode, bootstrap .8) ; A0 = 1.04 + .72*0.4 = 1.328
    # final_values[1] = 5 must be ignored because the step terminated.
    adv, ret = _gae(terminated_at=1, truncated_at=None, final=5.0)
    torch.testing.assert_close(adv, _row(1.328, 0.4, 1.02))
    torch.testing.assert_close(ret, _row(1.828, 1.0, 1.72))


def test_gae_truncation_bootstraps_from_final_value_and_cuts_the_trace() -> None:
    # truncated after t=1 with V(final obs) = 2: d1 = 1 + .9*2 - .6 = 2.2 ; A1 = 2.2
    # A2 = 1.02 ; A0 = 1.04 + .72*2.2 = 2.624
    adv, _ = _gae(terminated_at=None, truncated_at=1, final=2.0)
    torch.testing.assert_close(adv, _row(2.624, 2.2, 1.02))


def test_gae_ignores_bootstrap_after_terminal_last_step() -> None:
    # terminated after t=2: d2 = 1 - .7 = .3 ; A1 = 1.03 + .72*.3 = 1.246 ; A0 = 1.04 + .72*1.246
    adv, _ = _gae(terminated_at=2, truncated_at=None)
    torch.testing.assert_close(adv, _row(1.04 + 0.72 * 1.246, 1.246, 0.3))


def test_gae_is_vectorised_over_the_batch() -> None:
    rows = [_gae(None, None), _gae(1, None), _gae(None, 1, 2.0)]
    batched, _ = ops.gae(
        rewards=torch.ones(3, 3),
        values=_row(0.5, 0.6, 0.7).expand(3, 3),
        terminated=torch.cat([_flags(3, None), _flags(3, 1), _flags(3, None)]),
        truncated=torch.cat([_flags(3, None), _flags(3, None), _flags(3, 1)]),
        final_values=torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 2.0, 0.0]]),
        bootstrap_value=torch.full((3,), 0.8),
        gamma=GAMMA,
        lam=LAM,
    )
    torch.testing.assert_close(batched, torch.cat([adv for adv, _ in rows]))


@pytest.mark.parametrize(
    ("terminated_at", "truncated_at", "expected"),
    [
        (None, None, (1 + 0.9 * 2.548, 2.548, 1.72)),  # R2 = 1 + .9*.8 ; R1 = 1 + .9*R2
        (1, None, (1.9, 1.0, 1.72)),  # R1 = 1 (terminal) ; R0 = 1 + .9*1
        (None, 1, (3.52, 2.8, 1.72)),  # R1 = 1 + .9*2 (final value) ; R0 = 1 + .9*2.8
    ],
)
def test_discounted_returns(terminated_at, truncated_at, expected) -> None:
    returns = ops.discounted_returns(
        _row(1.0, 1.0, 1.0),
        _flags(3, terminated_at),
        _flags(3, truncated_at),
        _row(0.0, 2.0, 0.0),
        torch.tensor([0.8]),
        gamma=0.9,
    )
    torch.testing.assert_close(returns, _row(*expected))


def test_gae_with_lambda_one_equals_discounted_returns() -> None:
    args = (_row(1.0, 0.0, 2.0), _flags(3, None), _flags(3, 1), _row(0.0, 3.0, 0.0))
    _, ret = ops.gae(args[0], _row(0.3, 0.2, 0.1), *args[1:], torch.tensor([0.8]), 0.9, 1.0)
    torch.testing.assert_close(ret, ops.discounted_returns(*args, torch.tensor([0.8]), 0.9))


def test_vtrace_three_steps_by_hand() -> None:
    # rho = pi/mu = [.5/.25, .25/.5, .4/.4] = [2, .5, 1]; clipped rho = c = [1, .5, 1]
    # values [1, 2, 3], bootstrap 4, rewards [1, 0, 2], discounts .9 everywhere
    # delta0 = 1 * (1 + .9*2 - 1) = 1.8
    # delta1 = .5 * (0 + .9*3 - 2) = 0.35
    # delta2 = 1 * (2 + .9*4 - 3) = 2.6
    # vs2 - V2 = 2.6 ; vs1 - V1 = .35 + .9*.5*2.6 = 1.52 ; vs0 - V0 = 1.8 + .9*1*1.52 = 3.168
    # vs = [4.168, 3.52, 5.6]
    # pg0 = 1 * (1 + .9*3.52 - 1) = 3.168 ; pg1 = .5 * (0 + .9*5.6 - 2) = 1.52
    # pg2 = 1 * (2 + .9*4 - 3) = 2.6        (v_{s+1} at the end is the bootstrap value)
    behaviour = torch.log(_row(0.25, 0.5, 0.4))
    target = torch.log(_row(0.5, 0.25, 0.4))
    vs, pg = ops.vtrace(
        behaviour, target, _row(1.0, 0.0, 2.0), _row(1.0, 2.0, 3.0),
        torch.tensor([4.0]), torch.full((1, 3), 0.9),
    )
    torch.testing.assert_close(vs, _row(4.168, 3.52, 5.6))
    torch.testing.assert_close(pg, _row(3.168, 1.52, 2.6))


def test_vtrace_on_policy_matches_gae_lambda_one() -> None:
    logp = torch.log(_row(0.3, 0.6, 0.9))
    rewards, values = _row(1.0, -1.0, 0.5), _row(0.2, 0.4, -0.3)
    done = _flags(3, 1)
    vs, _ = ops.vtrace(logp, logp, rewards, values, torch.tensor([1.5]), 0.9 * (~done).float())
    _, ret = ops.gae(rewards, values, done, _flags(3, None), torch.zeros(1, 3),
                     torch.tensor([1.5]), 0.9, 1.0)
    torch.testing.assert_close(vs, ret)


def test_ppo_clip_loss_by_hand() -> None:
    # ratios [1.5, .5, 1.5, .5], advantages [1, 1, -1, -1], clip .2
    # per-sample max(-A r, -A clip(r)): [max(-1.5,-1.2), max(-.5,-.8), max(1.5,1.2), max(.5,.8)]
    #                                 = [-1.2, -0.5, 1.5, 0.8] -> mean 0.15
    # gradient wrt logp is -A r / 4 where unclipped wins, 0 where clipped: [0, -.125, .375, 0]
    old = torch.zeros(4)
    logp = torch.log(torch.tensor([1.5, 0.5, 1.5, 0.5])).requires_grad_()
    adv = torch.tensor([1.0, 1.0, -1.0, -1.0])
    loss = ops.ppo_clip_loss(logp, old, adv, clip=0.2)
    loss.backward()
    assert loss.item() == pytest.approx(0.15, abs=1e-6)
    torch.testing.assert_close(logp.grad, torch.tensor([0.0, -0.125, 0.375, 0.0]))
    assert ops.clip_fraction(logp, old, 0.2).item() == 1.0


def test_approx_kl_is_zero_on_policy_and_positive_off_policy() -> None:
    logp = torch.log(torch.tensor([0.2, 0.7]))
    assert ops.approx_kl(logp, logp).item() == 0.0
    # r = 2: (2 - 1) - ln 2 = 0.3069 ; r = .5: (.5 - 1) - ln .5 = 0.1931 -> mean 0.25
    kl = ops.approx_kl(logp + torch.log(torch.tensor([2.0, 0.5])), logp)
    assert kl.item() == pytest.approx(0.25, abs=1e-4)


def test_value_loss_plain_and_clipped_by_hand() -> None:
    values, returns = torch.tensor([1.9, 1.0]), torch.tensor([2.0, 2.0])
    old = torch.tensor([1.5, 1.5])
    # plain: .5 * mean([.01, 1.0]) = 0.2525
    assert ops.value_loss(values, returns).item() == pytest.approx(0.2525)
    # clipped values: old + clamp(v - old, .2) = [1.7, 1.3] -> errors [.09, .49]
    # max with plain: [.09, 1.0] -> .5 * mean = 0.2725
    assert ops.value_loss(values, returns, old, clip=0.2).item() == pytest.approx(0.2725)


def test_masked_categorical_never_samples_masked_actions() -> None:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(4096, 5, generator=gen) * 3.0
    mask = torch.rand(4096, 5, generator=gen) > 0.5
    mask[:, 2] = True  # at least one legal action per row
    logits[:, 0] = 50.0  # action 0 would win almost always if legal
    masked = ops.masked_logits(logits, mask)
    for _ in range(20):
        actions = ops.categorical_sample(masked, gen)
        assert mask.gather(1, actions[:, None]).all()
    illegal = ops.categorical_log_prob(masked, torch.zeros(4096, dtype=torch.long))[~mask[:, 0]]
    assert (illegal < -1e6).all()  # probability ~0 (log-prob ~ -1e9)
    entropy = ops.categorical_entropy(masked)
    assert torch.isfinite(entropy).all()
    assert (entropy <= torch.log(mask.sum(1).float()) + 1e-5).all()


def test_categorical_sample_frequencies_match_softmax() -> None:
    gen = torch.Generator().manual_seed(1)
    probs = torch.tensor([0.1, 0.2, 0.7])
    logits = torch.log(probs).expand(200_000, 3)
    counts = torch.bincount(ops.categorical_sample(logits, gen), minlength=3).float()
    torch.testing.assert_close(counts / counts.sum(), probs, atol=5e-3, rtol=0)


def test_gaussian_matches_torch_distributions() -> None:
    mean, log_std = torch.tensor([[0.5, -1.0]]), torch.tensor([[0.1, -0.7]])
    actions = torch.tensor([[0.0, 0.3]])
    normal = torch.distributions.Normal(mean, log_std.exp())
    torch.testing.assert_close(
        ops.gaussian_log_prob(mean, log_std, actions), normal.log_prob(actions).sum(-1)
    )
    torch.testing.assert_close(ops.gaussian_entropy(log_std), normal.entropy().sum(-1))
    # closed form for one dim: 0.5 * ln(2 pi e) + log_std
    assert ops.gaussian_entropy(torch.zeros(1)).item() == pytest.approx(
        0.5 * math.log(2 * math.pi * math.e)
    )


def test_gaussian_sample_moments() -> None:
    gen = torch.Generator().manual_seed(2)
    mean, log_std = torch.full((100_000, 1), 2.0), torch.full((100_000, 1), math.log(0.5))
    samples = ops.gaussian_sample(mean, log_std, gen)
    assert samples.mean().item() == pytest.approx(2.0, abs=0.01)
    assert samples.std().item() == pytest.approx(0.5, abs=0.01)
