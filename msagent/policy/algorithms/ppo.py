"""Proximal Policy Optimization (Schulman et al. 2017) with GAE computed in the learner.

Advantages are computed from the values and log-probabilities recorded at acting time (stored in
the fragments), never recomputed, so what the learner optimises is exactly what was acted.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any

import torch
from torch import Tensor

from msagent.algorithm_config import (  # noqa: F401  (re-exported)
    CARTPOLE_FRAGMENT_LEN, CARTPOLE_NUM_ENVS, CARTPOLE_PPO, PPOConfig,
)
from msagent.policy import operators as ops
from msagent.policy.algorithms.base import (
    BOOTSTRAP_VALUE, SEQUENCE_COLUMNS, Algorithm, evaluate_steps, stack_fragments,
)
from msagent.policy.algorithms.collective import SINGLE, Collective, global_normalize
from msagent.policy.devices import to_device
from msagent.policy.policy import Policy
from msagent.policy.symmetry import augment
from msagent.vocabulary import Columns, Fragment

Batch = dict[str, Tensor]

_LOSS_COLUMNS = (
    Columns.OBS,
    Columns.ACTIONS,
    Columns.LOGP,
    Columns.VALUES,
    Columns.ADVANTAGES,
    Columns.RETURNS,
    Columns.ACTION_MASK,
)
"""What :meth:`PPO.compute_loss` reads; other columns are dropped before minibatching."""


def _adam(policy: Policy, config: PPOConfig) -> torch.optim.Adam:
    """Adam over all parameters; the fused kernel (4x faster on CPU) where the device allows it.

    Fused Adam updates parameters without bumping their autograd version counters, so
    :meth:`PPO.update` tells the policy to drop its acting cache afterwards.
    """
    params = list(policy.model.parameters())
    fusable = all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
    return torch.optim.Adam(params, lr=config.lr, eps=config.adam_eps, fused=fusable or None)


class PPO(Algorithm):
    """Clipped PPO with Adam; :meth:`compute_loss` is the one hook that defines the objective.

    Attributes:
        policy: the policy being trained.
        config: the hyperparameters.
        optimizer: Adam over all policy and value parameters.
        updates: number of completed :meth:`update` calls.
        collective: the peers of a data-parallel learner group (gradients averaged, advantages
            normalized over the whole group's minibatch, early stops agreed); none by default.
    """

    def __init__(self, policy: Policy, config: PPOConfig | None = None) -> None:
        """Hold the policy and the settings (the optimizer is built on first use)."""
        self.policy = policy
        self.config = config or PPOConfig()
        self._optimizer: torch.optim.Adam | None = None
        self.updates = 0
        self._rng = torch.Generator().manual_seed(self.config.seed)
        self.collective: Collective = SINGLE
        self.clock: Callable[[], float] = time.monotonic  # anneal_s's clock (tests set it)
        self._updated_s, self._anneal_from = 0.0, None  # seconds before, and since, a start
        self.magnet: torch.nn.Module | None = None
        """The magnet (``magnet_coef > 0``): a slowly following copy of the network, made
        from it at the first update, a resume or a league reset (where it then is)."""

    # ------------------------------------------------------------------------------ update

    @property
    def optimizer(self) -> torch.optim.Adam:
        """Adam, built on first use: building it imports ``torch._dynamo`` (about 2 CPU-s), so
        a learner publishes its first parameters, and env workers start acting, meanwhile."""
        if self._optimizer is None:
            self._optimizer = _adam(self.policy, self.config)
        return self._optimizer

    def update(self, fragments: list[Fragment]) -> dict[str, float]:
        """Run epochs x minibatches of PPO on the fragments and return mean statistics."""
        batch = self.prepare(fragments)
        stats = self._update_on(batch)
        stats["losses/explained_variance"] = ops.explained_variance(
            batch[Columns.VALUES], batch[Columns.RETURNS]
        )
        return stats

    def _update_on(self, batch: Batch) -> dict[str, float]:
        """One update on a prepared batch (what every algorithm built on PPO's machinery
        shares): the learning rate, the minibatch steps, the counters, the acting cache."""
        lr = self._anneal()
        stats = self._optimize(batch)
        self._move_magnet()
        self.updates += 1
        self.policy.invalidate_cache()
        stats["learner/lr"] = lr
        return stats

    def prepare(self, fragments: list[Fragment]) -> Batch:
        """Stack fragments, add GAE advantages and returns, and flatten ``[B, T]`` to ``[B*T]``
        (a recurrent policy keeps whole fragments: minibatches are sets of sequences); the
        batch goes to the policy's device once, after the CPU work."""
        stacked = stack_fragments(fragments)
        self._check_finite(stacked)
        cfg = self.config
        advantages, returns = ops.gae(
            stacked[Columns.REWARDS],
            stacked[Columns.VALUES],
            stacked[Columns.TERMINATED],
            stacked[Columns.TRUNCATED],
            stacked[Columns.FINAL_VALUES],
            stacked[BOOTSTRAP_VALUE],
            cfg.gamma,
            cfg.gae_lambda,
        )
        stacked[Columns.ADVANTAGES], stacked[Columns.RETURNS] = advantages, returns
        if self.policy.recurrent:
            return to_device({k: stacked[k] for k in _LOSS_COLUMNS + SEQUENCE_COLUMNS
                              if k in stacked}, self.policy.device)
        flat = {k: stacked[k].flatten(0, 1) for k in _LOSS_COLUMNS if k in stacked}
        return to_device(augment(flat, self.policy.symmetries, len(self.policy.raw_obs_shape)),
                         self.policy.device)

    def _check_finite(self, stacked: Batch) -> None:
        """Refuse fragments holding NaN or infinite numbers, before anything moves."""
        self.refuse_non_finite(stacked, f"update {self.updates + 1}")

    def compute_loss(self, batch: Batch) -> tuple[Tensor, dict[str, Tensor]]:
        """The PPO objective on one minibatch: clipped policy loss + value loss - entropy bonus."""
        cfg, raw = self.config, batch
        if self.policy.recurrent:
            logp, entropy, values = evaluate_steps(self.policy, batch)
            batch = {k: v.flatten(0, 1) for k, v in batch.items() if k not in SEQUENCE_COLUMNS}
        else:
            logp, entropy, values = self.policy.evaluate(
                batch[Columns.OBS], batch[Columns.ACTIONS], batch.get(Columns.ACTION_MASK))
        advantages = batch[Columns.ADVANTAGES]
        if cfg.normalize_advantages and advantages.numel() > 1:
            advantages = global_normalize(advantages, self.collective)
        old_logp = batch[Columns.LOGP]
        policy_loss = ops.ppo_clip_loss(logp, old_logp, advantages, cfg.clip)
        old_values = batch[Columns.VALUES] if cfg.clip_vloss else None
        vf_clip = cfg.clip if cfg.vf_clip is None else cfg.vf_clip
        v_loss = ops.value_loss(values, batch[Columns.RETURNS], old_values, vf_clip)
        entropy = entropy.mean()
        loss = policy_loss + cfg.vf_coef * v_loss - cfg.ent_coef * entropy
        stats = self._loss_stats(policy_loss, v_loss, entropy, logp, old_logp)
        if cfg.magnet_coef > 0:
            # KL(policy || magnet), estimated on the batch's actions (drawn by the acting
            # policy, close to this one) as PPO's own approx_kl estimates its step
            kl = ops.approx_kl(self._magnet_logp(batch, raw), logp)
            loss = loss + cfg.magnet_coef * kl
            stats["losses/kl_to_magnet"] = kl.detach()
        return loss, stats

    @torch.no_grad()
    def _magnet_logp(self, batch: Batch, raw: Batch) -> Tensor:
        """The magnet's log-probabilities of the minibatch's actions (``raw``: the minibatch
        as given, with its sequences for a recurrent policy)."""
        live, self.policy.model = self.policy.model, self._magnet()
        try:
            if self.policy.recurrent:
                return evaluate_steps(self.policy, raw)[0]
            return self.policy.evaluate(batch[Columns.OBS], batch[Columns.ACTIONS],
                                        batch.get(Columns.ACTION_MASK))[0]
        finally:
            self.policy.model = live

    @torch.no_grad()
    def _move_magnet(self) -> None:
        """magnet <- magnet + magnet_rate * (policy - magnet), after every update."""
        if self.config.magnet_coef > 0:
            for slow, live in zip(self._magnet().parameters(), self.policy.model.parameters()):
                slow.lerp_(live, self.config.magnet_rate)

    def _magnet(self) -> torch.nn.Module:
        """The magnet, made from the network the first time it is needed."""
        if self.magnet is None:
            self.magnet = copy.deepcopy(self.policy.model).requires_grad_(False)
        return self.magnet

    def reset_optimizer(self) -> None:
        """Forget the optimizer's moments and the magnet (a league reset loads other weights:
        the magnet starts again from them)."""
        super().reset_optimizer()
        self.magnet = None

    @torch.no_grad()
    def _loss_stats(
        self, policy_loss: Tensor, v_loss: Tensor, entropy: Tensor, logp: Tensor, old: Tensor
    ) -> dict[str, Tensor]:
        """Detached per-minibatch statistics (averaged into ``update``'s result)."""
        return {
            "losses/policy": policy_loss.detach(),
            "losses/value": v_loss.detach(),
            "losses/entropy": entropy.detach(),
            "losses/approx_kl": ops.approx_kl(logp, old),
            "losses/clipfrac": ops.clip_fraction(logp, old, self.config.clip),
        }

    def _optimize(self, batch: Batch) -> dict[str, float]:
        """Epochs of shuffled minibatch gradient steps; statistics are averaged over steps."""
        history: list[dict[str, Tensor]] = []
        for epoch in range(self.config.epochs):
            for i, index in enumerate(self._minibatch_indices(len(batch[Columns.ACTIONS]))):
                loss, stats = self.compute_loss({k: v[index] for k, v in batch.items()})
                self._step(loss, (epoch, i, len(history)))
                history.append(stats)
            if self._kl_exceeded(history[-1]):
                break
        return {k: float(torch.stack([h[k] for h in history]).mean()) for k in history[0]}

    def _minibatch_indices(self, n: int) -> Iterator[Tensor]:
        """Yield a fresh random partition of ``range(n)`` into ``minibatches`` index sets."""
        permutation = torch.randperm(n, generator=self._rng)
        yield from torch.tensor_split(permutation, self.config.minibatches)

    def _step(self, loss: Tensor, where: tuple[int, int, int]) -> None:
        """One Adam step with global gradient-norm clipping, refused if anything is not finite.

        Args:
            loss: the minibatch loss.
            where: (epoch, minibatch, steps already taken in this update), for the message.
        """
        epoch, minibatch, applied = where
        cfg = self.config
        self.apply_gradients(loss, self.optimizer, cfg.max_grad_norm,
                             f"update {self.updates + 1} (epoch {epoch + 1}/{cfg.epochs}, "
                             f"minibatch {minibatch + 1}/{cfg.minibatches})", applied)

    def _kl_exceeded(self, stats: dict[str, Tensor]) -> bool:
        """Whether the last minibatch moved the policy further than ``target_kl`` allows."""
        target = self.config.target_kl
        if target is None:
            return False
        kl = self.collective.sum(stats["losses/approx_kl"].reshape(1)) / self.collective.world
        return float(kl) > target

    def _anneal(self) -> float:
        """Set and return this update's learning rate (linear decay when ``anneal_lr``)."""
        cfg = self.config
        lr = cfg.lr * max(0.0, 1.0 - self._progress()) if cfg.anneal_lr else cfg.lr
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr

    def _progress(self) -> float:
        """The share of the planned decay done: of ``total_updates`` or of ``anneal_s``,
        whichever is further (a group's ranks agree on their mean clock, so on one rate)."""
        cfg = self.config
        done = self.updates / cfg.total_updates if cfg.total_updates else 0.0
        if cfg.anneal_s:
            elapsed = self._updating_s()
            if self.collective.world > 1:
                mean = self.collective.sum(torch.tensor([elapsed], dtype=torch.float64))
                elapsed = float(mean[0]) / self.collective.world
            done = max(done, elapsed / cfg.anneal_s)
        return done

    def _updating_s(self) -> float:
        """Seconds since the first update, plus those of the runs this one resumes."""
        now = self.clock()
        if self._anneal_from is None:
            self._anneal_from = now - self._updated_s
        return now - self._anneal_from

    # ---------------------------------------------------------------------------- checkpoint

    def state_dict(self) -> dict[str, Any]:
        """A snapshot (deep copy) of optimizer state, update counter, shuffling RNG and config."""
        return {
            "optimizer": copy.deepcopy(self.optimizer.state_dict()),
            "updates": self.updates,
            "rng": self._rng.get_state(),
            "config": asdict(self.config),
            "updating_s": self._updating_s() if self._anneal_from is not None else
            self._updated_s,
            **({"magnet": copy.deepcopy(self._magnet().state_dict())}
               if self.config.magnet_coef > 0 else {}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned (the config stays the one given at init)."""
        self.optimizer.load_state_dict(copy.deepcopy(state["optimizer"]))
        self.updates = int(state["updates"])
        self._rng.set_state(state["rng"])
        self._updated_s, self._anneal_from = float(state.get("updating_s", 0.0)), None
        self.magnet = None  # a checkpoint without one (from before the magnet) starts it here
        if self.config.magnet_coef > 0 and state.get("magnet") is not None:
            self._magnet().load_state_dict(state["magnet"])
