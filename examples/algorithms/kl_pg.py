"""A user's own algorithm, through msagent's Algorithm interface only: advantage actor-critic
with a KL term toward a slowly moving reference policy (a regularized policy gradient, the
idea behind magnetic mirror descent and R-NaD's reward transformation, in its simplest form).

    [algorithm]
    script = "algorithms/kl_pg.py"      # relative to the TOML, like every script
    [algorithm.settings]                # validated by Settings below
    lr = 0.003
    kl_coef = 0.05

The learner builds it with ``make_algorithm(policy, settings)`` in its own process; checkpoints,
resume, learner groups (``apply_gradients`` averages the group's gradients) and NaN checks
(``refuse_non_finite``) come from the base class.
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from msagent.policy import operators as ops
from msagent.policy.algorithms import Algorithm
from msagent.policy.algorithms.base import BOOTSTRAP_VALUE, stack_fragments
from msagent.vocabulary import Columns


class Settings(BaseModel):
    """The ``[algorithm.settings]`` table (unknown keys and out-of-range values refused)."""

    model_config = ConfigDict(extra="forbid")
    lr: float = Field(0.003, gt=0)
    gamma: float = Field(0.99, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    epochs: int = Field(4, ge=1)
    """Gradient steps per batch (each on the whole batch)."""
    kl_coef: float = Field(0.05, ge=0)
    """Weight of KL(policy || reference) in the loss."""
    reference_rate: float = Field(0.1, gt=0, le=1)
    """How far the reference moves toward the policy after each update (an exponential mean)."""
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)


def make_algorithm(policy: Any, settings: Settings) -> Algorithm:
    """What ``[algorithm] script`` asks of this file."""
    return KLRegularizedPG(policy, settings)


class KLRegularizedPG(Algorithm):
    """A2C whose policy is pulled toward a lagging copy of itself."""

    def __init__(self, policy: Any, settings: Settings) -> None:
        self.policy, self.settings = policy, settings
        self.reference = copy.deepcopy(policy.model).requires_grad_(False)
        self.optimizer = torch.optim.Adam(policy.model.parameters(), lr=settings.lr)
        self.updates = 0

    def update(self, fragments: list[Any]) -> dict[str, float]:
        """Some epochs of the regularized loss on the whole batch; then move the reference."""
        batch = stack_fragments(fragments)
        self.refuse_non_finite(batch, f"update {self.updates + 1}")
        s = self.settings
        advantages, returns = ops.gae(
            batch[Columns.REWARDS], batch[Columns.VALUES], batch[Columns.TERMINATED],
            batch[Columns.TRUNCATED], batch[Columns.FINAL_VALUES], batch[BOOTSTRAP_VALUE],
            s.gamma, s.gae_lambda)
        obs, actions = batch[Columns.OBS].flatten(0, 1), batch[Columns.ACTIONS].flatten(0, 1)
        mask = batch.get(Columns.ACTION_MASK)
        mask = None if mask is None else mask.flatten(0, 1)
        advantages = ops.normalize(advantages.flatten())
        acting = batch[Columns.LOGP].flatten(0, 1)
        with torch.no_grad():
            reference = self._reference_logp(obs, actions, mask)
        for _ in range(s.epochs):
            logp, entropy, values = self.policy.evaluate(obs, actions, mask)
            ratio = torch.exp(logp - acting)  # importance weights: later epochs left it
            kl = ops.approx_kl(reference, logp)  # KL(policy || reference) on its own actions
            loss = (-(ratio * advantages).mean() + s.kl_coef * kl
                    + s.vf_coef * ops.value_loss(values, returns.flatten(), None, None))
            norm = self.apply_gradients(loss, self.optimizer, s.max_grad_norm,
                                        f"update {self.updates + 1}")
        self._move_reference()
        self.updates += 1
        self.policy.invalidate_cache()
        return {"losses/loss": float(loss.detach()), "losses/kl_to_reference": float(kl.detach()),
                "losses/entropy": float(entropy.mean().detach()), "losses/grad_norm": norm}

    def _reference_logp(self, obs: torch.Tensor, actions: torch.Tensor,
                        mask: torch.Tensor | None) -> torch.Tensor:
        """The log-probabilities of the batch's actions under the reference network."""
        live = self.policy.model
        self.policy.model = self.reference
        try:
            return self.policy.evaluate(obs, actions, mask)[0]
        finally:
            self.policy.model = live

    @torch.no_grad()
    def _move_reference(self) -> None:
        """reference <- reference + rate * (policy - reference)."""
        for ref, live in zip(self.reference.parameters(), self.policy.model.parameters()):
            ref.lerp_(live, self.settings.reference_rate)

    def state_dict(self) -> dict[str, Any]:
        """The optimizer, the reference network and the update count, for checkpoints."""
        return {"optimizer": self.optimizer.state_dict(), "updates": self.updates,
                "reference": self.reference.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Go on from a checkpoint."""
        self.optimizer.load_state_dict(state["optimizer"])
        self.reference.load_state_dict(state["reference"])
        self.updates = state["updates"]
