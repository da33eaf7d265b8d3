"""Pure tensor operators of policy-gradient learning: returns, advantages, losses, distributions.

Every function here is stateless and works on ``torch.Tensor`` only. Trajectory tensors are
shaped ``[B, T]`` (batch of fragments first, time second); per-fragment tensors such as
``bootstrap_value`` are shaped ``[B]``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

MASKED_LOGIT = -1e9
"""Logit given to masked actions: finite so softmax and entropy never produce NaN."""

_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------------------------
# Returns and advantages
# --------------------------------------------------------------------------------------------


def next_values(
    values: Tensor,
    terminated: Tensor,
    truncated: Tensor,
    final_values: Tensor,
    bootstrap_value: Tensor,
) -> Tensor:
    """Value of the state after each step, honouring termination (0) and truncation (final).

    Args:
        values: V(s_t), ``[B, T]``.
        terminated: True where the episode ended for good after step t, ``[B, T]``.
        truncated: True where a time limit cut the episode after step t, ``[B, T]``.
        final_values: V of the observation returned at truncation, ``[B, T]``.
        bootstrap_value: V of the observation after the last step, ``[B]``.

    Returns:
        V(s_{t+1}) as seen from step t, ``[B, T]``.
    """
    shifted = torch.cat([values[:, 1:], bootstrap_value.unsqueeze(1)], dim=1)
    shifted = torch.where(truncated, final_values, shifted)
    return torch.where(terminated, torch.zeros_like(shifted), shifted)


def _reverse_scan(deltas: Tensor, decay: Tensor) -> Tensor:
    """Solve ``out[t] = deltas[t] + decay[t] * out[t+1]`` backwards with ``out[T] = 0``."""
    out = torch.empty_like(deltas)
    carry = torch.zeros_like(deltas[:, 0])
    for t in range(deltas.shape[1] - 1, -1, -1):
        carry = deltas[:, t] + decay[:, t] * carry
        out[:, t] = carry
    return out


def gae(
    rewards: Tensor,
    values: Tensor,
    terminated: Tensor,
    truncated: Tensor,
    final_values: Tensor,
    bootstrap_value: Tensor,
    gamma: float,
    lam: float,
) -> tuple[Tensor, Tensor]:
    """Generalized advantage estimation that bootstraps through time limits but not through deaths.

    After step t the trace is cut when the episode terminated (next value 0) or was truncated
    (next value ``final_values[t]``); otherwise it continues into ``values[t+1]`` (or
    ``bootstrap_value`` at the last step).

    Returns:
        ``(advantages, returns)``, both ``[B, T]``, with ``returns = advantages + values``.
    """
    terminated, truncated = terminated.bool(), truncated.bool()
    nxt = next_values(values, terminated, truncated, final_values, bootstrap_value)
    deltas = rewards + gamma * nxt - values
    decay = (gamma * lam) * (~(terminated | truncated)).to(values.dtype)
    advantages = _reverse_scan(deltas, decay)
    return advantages, advantages + values


def discounted_returns(
    rewards: Tensor,
    terminated: Tensor,
    truncated: Tensor,
    final_values: Tensor,
    bootstrap_value: Tensor,
    gamma: float,
) -> Tensor:
    """Monte-Carlo discounted returns, bootstrapped at truncations and at the fragment's end.

    Returns:
        ``R[t] = r[t] + gamma * next``, where next is 0 after termination,
        ``final_values[t]`` after truncation and ``R[t+1]`` (or ``bootstrap_value``) otherwise,
        shaped ``[B, T]``.
    """
    terminated, truncated = terminated.bool(), truncated.bool()
    fixed = rewards + gamma * torch.where(truncated & ~terminated, final_values, 0.0)
    decay = gamma * (~(terminated | truncated)).to(rewards.dtype)
    fixed[:, -1] += decay[:, -1] * bootstrap_value
    return _reverse_scan(fixed, decay)


def vtrace(
    behaviour_logp: Tensor,
    target_logp: Tensor,
    rewards: Tensor,
    values: Tensor,
    bootstrap_value: Tensor,
    discounts: Tensor,
    clip_rho: float = 1.0,
    clip_c: float = 1.0,
) -> tuple[Tensor, Tensor]:
    """V-trace targets and policy-gradient advantages (Espeholt et al. 2018, IMPALA, eq. 1).

    Args:
        behaviour_logp: log mu(a_t|s_t) of the acting policy, ``[B, T]``.
        target_logp: log pi(a_t|s_t) of the learning policy, ``[B, T]``.
        rewards: r_t, ``[B, T]``.
        values: V(s_t) of the learning value function, ``[B, T]``.
        bootstrap_value: V(s_T), ``[B]``.
        discounts: gamma * (1 - done_t), ``[B, T]``.
        clip_rho: rho-bar, truncation of the importance weights in the TD errors and pg term.
        clip_c: c-bar, truncation of the trace-cutting coefficients.

    Returns:
        ``(vs, pg_advantages)``: value targets v_s and ``rho_s (r_s + discount_s v_{s+1} - V(s))``.
    """
    rhos = torch.exp(target_logp - behaviour_logp)
    clipped_rhos = torch.clamp(rhos, max=clip_rho)
    cs = torch.clamp(rhos, max=clip_c)
    next_vals = torch.cat([values[:, 1:], bootstrap_value.unsqueeze(1)], dim=1)
    deltas = clipped_rhos * (rewards + discounts * next_vals - values)
    vs = _reverse_scan(deltas, discounts * cs) + values
    next_vs = torch.cat([vs[:, 1:], bootstrap_value.unsqueeze(1)], dim=1)
    pg_advantages = clipped_rhos * (rewards + discounts * next_vs - values)
    return vs, pg_advantages


def normalize(x: Tensor, eps: float = 1e-8) -> Tensor:
    """Standardise to zero mean and unit variance, so step sizes do not track reward scale."""
    return (x - x.mean()) / (x.std() + eps)


def explained_variance(predicted: Tensor, target: Tensor) -> float:
    """1 - Var[target - predicted] / Var[target]: how much of the return the critic explains."""
    var = target.var()
    if var.item() == 0.0:
        return float("nan")
    return float(1.0 - (target - predicted).var() / var)


# --------------------------------------------------------------------------------------------
# Losses
# --------------------------------------------------------------------------------------------


def ppo_clip_loss(logp: Tensor, old_logp: Tensor, advantages: Tensor, clip: float) -> Tensor:
    """PPO's clipped surrogate objective, negated so that it is minimised (Schulman et al. 2017).

    Returns:
        ``mean(max(-A * r, -A * clip(r, 1 - clip, 1 + clip)))`` with ``r = exp(logp - old_logp)``.
    """
    ratio = torch.exp(logp - old_logp)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip, 1.0 + clip)
    return torch.max(unclipped, clipped).mean()


def approx_kl(logp: Tensor, old_logp: Tensor) -> Tensor:
    """Low-variance unbiased estimate of KL(old || new), ``mean((r - 1) - log r)``."""
    log_ratio = logp - old_logp
    return (torch.exp(log_ratio) - 1.0 - log_ratio).mean()


def clip_fraction(logp: Tensor, old_logp: Tensor, clip: float) -> Tensor:
    """Fraction of samples whose probability ratio left ``[1 - clip, 1 + clip]``."""
    ratio = torch.exp(logp - old_logp)
    return ((ratio - 1.0).abs() > clip).float().mean()


def value_loss(
    values: Tensor,
    returns: Tensor,
    old_values: Tensor | None = None,
    clip: float | None = None,
) -> Tensor:
    """Half mean squared error of the critic, optionally clipped around the acting-time values.

    With ``old_values`` and ``clip`` given, the loss is the elementwise max of the plain error and
    the error of ``old_values + clamp(values - old_values, -clip, clip)`` (PPO2's value clipping).
    """
    loss = (values - returns).square()
    if old_values is not None and clip is not None:
        clipped = old_values + torch.clamp(values - old_values, -clip, clip)
        loss = torch.max(loss, (clipped - returns).square())
    return 0.5 * loss.mean()


# --------------------------------------------------------------------------------------------
# Categorical distribution with action masks
# --------------------------------------------------------------------------------------------


def masked_logits(logits: Tensor, mask: Tensor | None) -> Tensor:
    """Replace the logits of illegal actions (``mask == False``) by a large finite negative."""
    if mask is None:
        return logits
    return logits.masked_fill(~mask.bool(), MASKED_LOGIT)


def categorical_log_prob(logits: Tensor, actions: Tensor) -> Tensor:
    """Log-probability of integer ``actions`` ``[N]`` under ``softmax(logits)`` ``[N, A]``."""
    log_probs = torch.log_softmax(logits, dim=-1)
    return log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)


def categorical_entropy(logits: Tensor) -> Tensor:
    """Entropy of ``softmax(logits)`` per row; masked actions (probability 0) contribute 0."""
    log_probs = torch.log_softmax(logits, dim=-1)
    return -(log_probs.exp() * log_probs).sum(-1)


def categorical_sample(logits: Tensor, generator: torch.Generator | None = None) -> Tensor:
    """Draw one action per row with the Gumbel-max trick; masked logits can never win.

    The Gumbel noise ``-log(-log(u))`` with float32 ``u`` in ``[0, 1)`` lies below ~17, so a
    logit of :data:`MASKED_LOGIT` always loses.
    """
    noise = torch.rand(logits.shape, generator=generator, dtype=logits.dtype)
    noise = noise.log_().neg_().log_()
    return torch.argmax(logits - noise, dim=-1)


def multi_categorical_log_prob(logits: Tensor, actions: Tensor, nvec: tuple[int, ...]) -> Tensor:
    """Log-probability of multi-discrete ``actions`` ``[N, K]``: the sum over the K independent
    categoricals whose logits lie side by side in ``logits`` ``[N, sum(nvec)]``."""
    parts = torch.split(logits, nvec, dim=-1)
    return sum(categorical_log_prob(p, actions[..., i]) for i, p in enumerate(parts))


def multi_categorical_entropy(logits: Tensor, nvec: tuple[int, ...]) -> Tensor:
    """Entropy of K independent categoricals (the sum of theirs), per row."""
    return sum(categorical_entropy(p) for p in torch.split(logits, nvec, dim=-1))


def multi_categorical_sample(logits: Tensor, nvec: tuple[int, ...],
                             generator: torch.Generator | None = None) -> Tensor:
    """One choice per component, ``[N, K]``, each drawn as :func:`categorical_sample` does."""
    parts = torch.split(logits, nvec, dim=-1)
    return torch.stack([categorical_sample(p, generator) for p in parts], dim=-1)


def multi_categorical_mode(logits: Tensor, nvec: tuple[int, ...]) -> Tensor:
    """The most likely choice of each component, ``[N, K]``."""
    return torch.stack([p.argmax(-1) for p in torch.split(logits, nvec, dim=-1)], dim=-1)


# --------------------------------------------------------------------------------------------
# Diagonal Gaussian distribution
# --------------------------------------------------------------------------------------------


def gaussian_log_prob(mean: Tensor, log_std: Tensor, actions: Tensor) -> Tensor:
    """Log-density of ``actions`` under ``N(mean, exp(log_std)^2)``, summed over action dims."""
    z = (actions - mean) * torch.exp(-log_std)
    return -(0.5 * z.square() + log_std + 0.5 * _LOG_2PI).sum(-1)


def gaussian_entropy(log_std: Tensor) -> Tensor:
    """Entropy of a diagonal Gaussian, summed over action dims (broadcasts over the batch)."""
    return (log_std + 0.5 * (1.0 + _LOG_2PI)).sum(-1)


def gaussian_sample(
    mean: Tensor, log_std: Tensor, generator: torch.Generator | None = None
) -> Tensor:
    """Draw ``mean + exp(log_std) * eps`` with standard normal eps."""
    eps = torch.randn(mean.shape, generator=generator, dtype=mean.dtype)
    return mean + torch.exp(log_std) * eps
