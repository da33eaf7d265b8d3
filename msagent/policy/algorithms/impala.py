"""IMPALA's V-trace actor-critic (Espeholt et al. 2018), for asynchronous training.

Actors never wait for the learner, so a fragment may have been acted by an older policy.
V-trace corrects for it: per minibatch of whole fragments, the current policy's log-probs and
values are recomputed, and the value targets and policy-gradient advantages are V-trace's,
with truncated importance weights. Everything else (Adam, clipping, non-finite refusals,
learner groups) is PPO's machinery, shared by subclassing.

Approximation: the value after a fragment's last step is the one recorded at acting time (the
fragment does not carry the next observation); truncated episodes bootstrap from the
acting-time value of the final observation.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from msagent.errors import ConfigError
from msagent.policy import operators as ops
from msagent.policy.algorithms.base import BOOTSTRAP_VALUE, evaluate_steps, stack_fragments
from msagent.policy.algorithms.collective import global_normalize
from msagent.policy.algorithms.ppo import PPO, Batch
from msagent.policy.devices import to_device
from msagent.policy.symmetry import augment
from msagent.vocabulary import Columns, Fragment


class IMPALA(PPO):
    """V-trace policy gradient + value regression to V-trace targets + entropy bonus.

    Uses ``PPOConfig``'s ``gamma``, ``vf_coef``, ``ent_coef``, ``lr``, ``epochs``,
    ``minibatches`` (over fragments), ``max_grad_norm``, ``normalize_advantages`` and
    ``vtrace_clip_rho`` / ``vtrace_clip_c``; PPO's ratio clipping is not used, nor its
    magnet (refused).
    """

    def __init__(self, policy: Any, config: Any = None) -> None:
        """PPO's set-up; a ``magnet_coef`` is refused (its term is in PPO's loss only)."""
        super().__init__(policy, config)
        if self.config.magnet_coef > 0:
            raise ConfigError(f"magnet_coef = {self.config.magnet_coef} is a term of PPO's "
                              "loss; IMPALA has none (set it to 0 or use name = \"ppo\")")

    def update(self, fragments: list[Fragment]) -> dict[str, float]:
        """Epochs x minibatches of V-trace steps on the fragments; mean statistics."""
        batch = self.prepare(fragments)
        if len(batch[Columns.ACTIONS]) < self.config.minibatches:
            raise ConfigError(f"IMPALA splits fragments into {self.config.minibatches} "
                              f"minibatches but got {len(batch[Columns.ACTIONS])} fragments")
        return self._update_on(batch)

    def prepare(self, fragments: list[Fragment]) -> Batch:
        """Stack fragments as ``[B, T]`` (V-trace runs along T), refusing non-finite data."""
        stacked = stack_fragments(fragments)
        self._check_finite(stacked)
        return to_device(augment(stacked, self.policy.symmetries,
                                 len(self.policy.raw_obs_shape)), self.policy.device)

    def compute_loss(self, batch: Batch) -> tuple[Tensor, dict[str, Tensor]]:
        """The IMPALA objective on a minibatch of whole fragments."""
        cfg = self.config
        actions = batch[Columns.ACTIONS]
        b, t = actions.shape[:2]
        logp, entropy, values = evaluate_steps(self.policy, batch)
        logp, values = logp.view(b, t), values.view(b, t)
        vs, advantages = self._targets(batch, logp.detach(), values.detach())
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = global_normalize(advantages.flatten(), self.collective).view(b, t)
        policy_loss = -(advantages * logp).mean()
        v_loss = 0.5 * ((vs - values) ** 2).mean()
        entropy = entropy.mean()
        loss = policy_loss + cfg.vf_coef * v_loss - cfg.ent_coef * entropy
        return loss, self._loss_stats(policy_loss, v_loss, entropy, logp.flatten(),
                                      batch[Columns.LOGP].flatten())

    @torch.no_grad()
    def _targets(self, batch: Batch, logp: Tensor, values: Tensor) -> tuple[Tensor, Tensor]:
        """V-trace value targets and advantages; an episode's end cuts the trace."""
        cfg = self.config
        terminated = batch[Columns.TERMINATED].float()
        truncated = batch[Columns.TRUNCATED].float()
        rewards = batch[Columns.REWARDS] + cfg.gamma * truncated * batch[Columns.FINAL_VALUES]
        discounts = cfg.gamma * (1.0 - torch.maximum(terminated, truncated))
        return ops.vtrace(batch[Columns.LOGP], logp, rewards, values, batch[BOOTSTRAP_VALUE],
                          discounts, cfg.vtrace_clip_rho, cfg.vtrace_clip_c)


def _algorithms() -> dict[str, type[PPO]]:
    """Every algorithm by ``[algorithm] name`` (behaviour cloning imported here, not above,
    to keep one registry without an import cycle)."""
    from msagent.policy.algorithms.bc import BehaviourCloning

    return {"ppo": PPO, "impala": IMPALA, "bc": BehaviourCloning}


ALGORITHMS = _algorithms()
"""Algorithms by ``[algorithm] name``."""
