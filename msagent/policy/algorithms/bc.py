"""Behaviour cloning: make the policy take the actions the data took.

Correct on data the policy did not act (game clients' uploads, another run's experience): the
loss needs neither the behaviour's log-probabilities nor value estimates. The value head is
still fitted to the discounted returns of the data, so that a later V-trace fine-tune starts
from a sensible critic. Everything else (Adam, clipping, non-finite refusals, learner groups)
is PPO's machinery, shared by subclassing.
"""

from __future__ import annotations

import torch
from torch import Tensor

from msagent.errors import ConfigError
from msagent.policy import operators as ops
from msagent.policy.algorithms.base import BOOTSTRAP_VALUE, stack_fragments
from msagent.policy.devices import to_device
from msagent.policy.algorithms.ppo import PPO, Batch
from msagent.vocabulary import Columns, Fragment

_STEP_KEYS = (Columns.OBS, Columns.ACTIONS, Columns.ACTION_MASK, Columns.RETURNS)


class BehaviourCloning(PPO):
    """Maximum likelihood of the data's actions + value regression + entropy bonus.

    Uses ``PPOConfig``'s ``gamma``, ``vf_coef``, ``ent_coef``, ``lr``, ``epochs``,
    ``minibatches`` (over steps) and ``max_grad_norm``; clipping, GAE and ``target_kl`` are not
    used.
    """

    def prepare(self, fragments: list[Fragment]) -> Batch:
        """Stack fragments, add discounted returns (the value target), flatten to steps.

        Raises:
            ConfigError: the policy is recurrent (cloning replays no acting memory).
        """
        if self.policy.recurrent:
            raise ConfigError("behaviour cloning trains feed-forward policies; the agent's "
                              "network has an LSTM core (NetworkConfig.lstm > 0)")
        stacked = stack_fragments(fragments)
        self._check_finite(stacked)
        stacked[Columns.RETURNS] = self._returns(stacked)
        return to_device({k: stacked[k].flatten(0, 1) for k in _STEP_KEYS if k in stacked},
                         self.policy.device)

    def update(self, fragments: list[Fragment]) -> dict[str, float]:
        """Epochs x minibatches of cloning steps; mean statistics."""
        return self._update_on(self.prepare(fragments))

    def compute_loss(self, batch: Batch) -> tuple[Tensor, dict[str, Tensor]]:
        """Negative log-likelihood of the data's actions, plus the value and entropy terms."""
        cfg = self.config
        logp, entropy, values = self.policy.evaluate(
            batch[Columns.OBS], batch[Columns.ACTIONS], batch.get(Columns.ACTION_MASK))
        policy_loss = -logp.mean()
        v_loss = 0.5 * ((batch[Columns.RETURNS] - values) ** 2).mean()
        entropy = entropy.mean()
        loss = policy_loss + cfg.vf_coef * v_loss - cfg.ent_coef * entropy
        return loss, {"losses/policy": policy_loss.detach(), "losses/value": v_loss.detach(),
                      "losses/entropy": entropy.detach(),
                      "losses/action_match": self._match(batch).detach()}

    def _kl_exceeded(self, stats: dict[str, Tensor]) -> bool:
        """Cloning has no trust region: never stop an update early."""
        return False

    @torch.no_grad()
    def _returns(self, stacked: Batch) -> Tensor:
        """Discounted returns along each fragment, bootstrapping from the recorded values."""
        cfg = self.config
        _, returns = ops.gae(stacked[Columns.REWARDS], stacked[Columns.VALUES],
                             stacked[Columns.TERMINATED], stacked[Columns.TRUNCATED],
                             stacked[Columns.FINAL_VALUES], stacked[BOOTSTRAP_VALUE],
                             cfg.gamma, 1.0)
        return returns

    @torch.no_grad()
    def _match(self, batch: Batch) -> Tensor:
        """Share of steps whose most likely action is the data's (discrete actions only)."""
        actions = batch[Columns.ACTIONS].cpu()
        if actions.is_floating_point():
            return torch.tensor(float("nan"))
        mask = batch.get(Columns.ACTION_MASK)
        mask, obs = None if mask is None else mask.cpu().numpy(), batch[Columns.OBS].cpu().numpy()
        if self.policy.action_spec.multi:  # a step matches when every component does
            best = self.policy.act(obs, mask, deterministic=True, values=False).actions
            return (torch.from_numpy(best) == actions).all(-1).float().mean()
        probs = self.policy.action_probs(obs, mask)
        return (torch.from_numpy(probs.argmax(-1)) == actions).float().mean()
