"""What every learning algorithm offers the learner, and the fragment stacking they share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np
import torch
from torch import Tensor

from msagent.errors import ConfigError
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

    Attributes:
        policy: the policy being trained (its weights are what the learner publishes).
    """

    policy: Policy

    @abstractmethod
    def update(self, fragments: list[Fragment]) -> dict[str, float]:
        """Improve the policy on one batch of fragments and report training statistics."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Learner-side state beyond the weights (optimizer, counters), for checkpoints."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""


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
