"""Game symmetries as data augmentation: each training step seen once more, transformed.

A board game such as Connect Four looks the same in a mirror: the mirrored position, with the
mirrored move, is as good or as bad as the original. AlphaZero trains on every symmetric copy
of its positions; a :class:`Symmetry` lets a policy do the same. The learner adds one
transformed copy of each step per symmetry: the observation with some axes reversed, the
action and the action mask permuted. Values, advantages and returns are unchanged (the game
is), and the recorded log-probability is kept: the copied action was drawn with exactly that
probability, so the PPO ratio of the copy is a valid importance ratio.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from msagent.errors import ConfigError
from msagent.vocabulary import Columns

Batch = dict[str, Tensor]


@dataclass(frozen=True)
class Symmetry:
    """One transformation under which the game is unchanged.

    Attributes:
        flip_obs_axes: axes of one observation (no batch axis) to reverse; Connect Four's
            ``(6, 7, 2)`` board mirrors with ``(1,)``.
        action_permutation: ``action_permutation[a]`` is the transformed action ``a`` (a
            discrete action space of that size); reversing seven columns is ``(6, 5, ..., 0)``.
    """

    flip_obs_axes: tuple[int, ...]
    action_permutation: tuple[int, ...]

    def __post_init__(self) -> None:
        """Refuse a permutation that is not one (each action exactly once)."""
        if sorted(self.action_permutation) != list(range(len(self.action_permutation))):
            raise ConfigError(f"Symmetry.action_permutation {self.action_permutation} must "
                              f"hold each of 0..{len(self.action_permutation) - 1} once")

    @classmethod
    def mirror(cls, axis: int, actions: int) -> Symmetry:
        """Reverse one observation axis and the order of ``actions`` discrete actions."""
        return cls((axis,), tuple(reversed(range(actions))))

    def check(self, obs_shape: Sequence[int], action_size: int, continuous: bool) -> None:
        """Refuse a symmetry that does not fit the policy's spaces, naming the mismatch."""
        if continuous:
            raise ConfigError("a Symmetry needs a discrete action space (it permutes actions)")
        if len(self.action_permutation) != action_size:
            raise ConfigError(f"Symmetry.action_permutation has {len(self.action_permutation)} "
                              f"entries but the action space has {action_size} actions")
        bad = [a for a in self.flip_obs_axes if not -len(obs_shape) <= a < len(obs_shape)]
        if bad:
            raise ConfigError(f"Symmetry.flip_obs_axes {bad} are not axes of observations "
                              f"of shape {tuple(obs_shape)}")

    def apply(self, batch: Batch, obs_ndim: int) -> Batch:
        """The transformed copy of a ``[N, ...]`` or ``[B, T, ...]`` batch (columns it does not
        know stay as they are)."""
        out = dict(batch)
        lead = batch[Columns.OBS].ndim - obs_ndim
        axes = [a % obs_ndim + lead for a in self.flip_obs_axes]
        out[Columns.OBS] = batch[Columns.OBS].flip(axes)
        perm = torch.as_tensor(self.action_permutation, device=batch[Columns.ACTIONS].device)
        out[Columns.ACTIONS] = perm[batch[Columns.ACTIONS].long()].to(batch[Columns.ACTIONS].dtype)
        if Columns.ACTION_MASK in batch:  # mask'[perm[a]] = mask[a]
            out[Columns.ACTION_MASK] = batch[Columns.ACTION_MASK][..., torch.argsort(perm)]
        return out


def checked_symmetries(
    symmetries: Sequence[Symmetry], obs_shape: Sequence[int], action_size: int,
    continuous: bool, recurrent: bool,
) -> tuple[Symmetry, ...]:
    """The symmetries, each checked against a policy's spaces; a recurrent policy takes none
    (a mirrored sequence would start from an unmirrored recurrent state)."""
    if symmetries and recurrent:
        raise ConfigError("symmetries are not supported with a recurrent policy (lstm > 0)")
    for symmetry in symmetries:
        symmetry.check(obs_shape, action_size, continuous)
    return tuple(symmetries)


def augment(batch: Batch, symmetries: Sequence[Symmetry], obs_ndim: int) -> Batch:
    """The batch followed by one transformed copy per symmetry (``len(symmetries) + 1`` x rows)."""
    if not symmetries:
        return batch
    copies = [batch] + [s.apply(batch, obs_ndim) for s in symmetries]
    return {k: torch.cat([c[k] for c in copies]) for k in batch}
