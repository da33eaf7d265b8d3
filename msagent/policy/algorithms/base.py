"""What every learning algorithm offers the learner, and the fragment stacking they share."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import torch
from torch import Tensor

from msagent.errors import ConfigError, NonFiniteError
from msagent.policy.algorithms.collective import SINGLE, Collective
from msagent.policy.policy import Policy
from msagent.vocabulary import Columns, Fragment

BOOTSTRAP_VALUE = "bootstrap_value"
"""Batch key of the per-fragment bootstrap values ``[B]`` (not a per-step column)."""

_STEP_COLUMNS = (
    Columns.OBS,
    Columns.ACTIONS,
    Columns.LOGP,
    Columns.VALUES,
    Columns.REWARDS,
    Columns.TERMINATED,
    Columns.TRUNCATED,
    Columns.FINAL_VALUES,
)
_FLOAT_COLUMNS = (Columns.LOGP, Columns.VALUES, Columns.REWARDS, Columns.FINAL_VALUES)


class Algorithm(ABC):
    """A learning rule that improves ``policy`` from acted fragments; it lives only in the learner.

    A user's algorithm subclasses it (``[algorithm] script``); ``apply_gradients`` and
    ``refuse_non_finite`` give it the learner group's gradient averaging and the NaN checks
    the built-in ones have.

    Attributes:
        policy: the policy being trained (its weights are what the learner publishes).
        collective: the peers of a data-parallel learner group (set by the learner; ``SINGLE``
            alone): gradients are averaged over it and refusals agreed on by every rank.
    """

    policy: Policy
    collective: Collective = SINGLE

    @abstractmethod
    def update(self, fragments: list[Fragment]) -> dict[str, float]:
        """Improve the policy on one batch of fragments and report training statistics."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Learner-side state beyond the weights (optimizer, counters), for checkpoints."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""

    def reset_optimizer(self) -> None:
        """Forget the optimizer's moments (a league reset loads other weights)."""
        optimizer = getattr(self, "optimizer", None)
        if optimizer is not None:
            optimizer.state.clear()

    def apply_gradients(self, loss: Tensor, optimizer: torch.optim.Optimizer,
                        max_grad_norm: float | None = None, where: str = "",
                        applied: int = 0) -> float:
        """One optimizer step on ``loss``: gradients averaged over the learner group, clipped
        to ``max_grad_norm``; refused if the loss or the gradient norm is not finite (the
        weights and the optimizer's state do not move). Returns the gradient norm.

        Args:
            where: Where the step is, for the message (e.g. ``update 3 (epoch 1/4)``).
            applied: Steps of this update already taken, for the message.

        Raises:
            NonFiniteError: naming what was not finite, ``where`` and the steps applied.
        """
        optimizer.zero_grad(set_to_none=True)
        value = float(loss.detach())
        if self.collective.any(not math.isfinite(value)):  # every rank refuses together
            raise NonFiniteError(_refused(f"loss = {value}", where, applied))
        loss.backward()
        params = list(self.policy.model.parameters())
        if self.collective.world > 1:
            self.collective.average(gradients(params))
        norm = float(gradient_norm(params, max_grad_norm))
        if not math.isfinite(norm):
            optimizer.zero_grad(set_to_none=True)
            raise NonFiniteError(_refused(
                f"gradient: total grad norm = {norm} (loss = {value:.6g})", where, applied))
        optimizer.step()
        return norm

    def refuse_non_finite(self, batch: dict[str, Tensor], where: str = "") -> None:
        """Refuse a batch holding NaN or infinite numbers before anything moves (every rank
        of a group together), naming the column and the first bad index.

        Raises:
            NonFiniteError: a floating column of ``batch`` is not all finite.
        """
        bad = next((name for name, column in batch.items()
                    if column.is_floating_point() and not torch.isfinite(column).all()), None)
        if self.collective.any(bad is not None):
            of = f" of {where}" if where else ""
            problem = (f"non-finite {bad} in the fragments{of}: "
                       f"{first_non_finite(bad, batch[bad])}" if bad is not None else
                       f"non-finite numbers in a peer learner's fragments{of}")
            raise NonFiniteError(f"{problem}; the update was refused, the weights and "
                                 "optimizer state kept")


def gradients(params: list[Tensor]) -> list[Tensor]:
    """Every parameter's gradient (zeros where none), in a fixed order for all ranks."""
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    return [p.grad for p in params]


def gradient_norm(params: list[Tensor], max_grad_norm: float | None) -> Tensor:
    """The total gradient norm, clipping to ``max_grad_norm`` when it is set."""
    params = [p for p in params if p.grad is not None]
    if max_grad_norm is None:
        return torch.nn.utils.get_total_norm([p.grad for p in params])
    return torch.nn.utils.clip_grad_norm_(params, max_grad_norm)


def first_non_finite(name: str, column: Tensor) -> str:
    """Name the first non-finite element of a ``[fragment, step, ...]`` column."""
    bad = ~torch.isfinite(column)
    first = [int(i) for i in bad.nonzero()[0]]
    where = [f"fragment {first[0]}"] + ([f"step {first[1]}"] if len(first) > 1 else [])
    where += [str(i) for i in first[2:]]
    return (f"{name}[{', '.join(where)}] = {float(column[tuple(first)])} "
            f"({int(bad.sum())} of {bad.numel()} values)")


def _refused(what: str, where: str, applied: int = 0) -> str:
    """Say what was not finite, where, and what was kept."""
    kept = (f"; the {applied} earlier minibatch steps of this update were applied"
            if applied else "")
    return (f"non-finite {what}{f' in {where}' if where else ''}: the step was refused, the "
            f"weights and optimizer state kept{kept}")


def _column(fragments: list[Fragment], name: str) -> Tensor:
    """Stack one column of all fragments into a ``[B, T, ...]`` tensor."""
    array = np.stack([getattr(f, name) for f in fragments])
    if name in _FLOAT_COLUMNS:
        array = array.astype(np.float32, copy=False)
    elif name in (Columns.TERMINATED, Columns.TRUNCATED):
        array = array.astype(bool, copy=False)
    elif name == Columns.OBS and array.dtype not in (np.float32, np.uint8):
        array = array.astype(np.float32)
    return torch.from_numpy(array)


def stack_fragments(fragments: list[Fragment]) -> dict[str, Tensor]:
    """Turn equally long fragments into one batch of ``[B, T, ...]`` tensors keyed by Columns.

    ``bootstrap_value`` becomes a ``[B]`` tensor under :data:`BOOTSTRAP_VALUE`; the action mask is
    included only when every fragment has one.
    """
    if not fragments:
        raise ConfigError("cannot build a batch from zero fragments")
    lengths = {len(f) for f in fragments}
    if len(lengths) != 1:
        raise ConfigError(f"fragments must share one length T, got lengths {sorted(lengths)}")
    batch = {name: _column(fragments, name) for name in _STEP_COLUMNS}
    bootstrap = np.array([f.bootstrap_value for f in fragments], dtype=np.float32)
    batch[BOOTSTRAP_VALUE] = torch.from_numpy(bootstrap)
    if all(f.action_mask is not None for f in fragments):
        batch[Columns.ACTION_MASK] = _column(fragments, Columns.ACTION_MASK)
    if all(f.initial_state is not None for f in fragments):
        batch[Columns.INITIAL_STATE] = _column(fragments, Columns.INITIAL_STATE).float()
    batch[Columns.RESETS] = episode_starts(batch[Columns.TERMINATED], batch[Columns.TRUNCATED])
    return batch


def episode_starts(terminated: Tensor, truncated: Tensor) -> Tensor:
    """``[B, T]``: true at a step that starts a new episode inside its fragment (where a
    recurrent policy's memory was zeroed when it acted); the first step is never one, since
    the fragment's ``initial_state`` already holds its memory."""
    done = terminated | truncated
    return torch.cat([torch.zeros_like(done[:, :1]), done[:, :-1]], dim=1)


SEQUENCE_COLUMNS = (Columns.INITIAL_STATE, Columns.RESETS)
"""Batch keys a recurrent policy replays sequences with (one row per fragment)."""


def evaluate_steps(policy: Policy, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor, Tensor]:
    """``(logp, entropy, values)`` as ``[B * T]`` rows of a ``[B, T]`` batch of whole
    fragments: a recurrent policy replays each from its stored state, a feed-forward one
    sees the steps one by one."""
    obs, actions, mask = batch[Columns.OBS], batch[Columns.ACTIONS], batch.get(Columns.ACTION_MASK)
    if policy.recurrent:
        return policy.evaluate(obs, actions, mask, batch.get(Columns.INITIAL_STATE),
                               batch[Columns.RESETS])
    return policy.evaluate(obs.flatten(0, 1), actions.flatten(0, 1),
                           None if mask is None else mask.flatten(0, 1))
