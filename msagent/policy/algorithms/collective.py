"""What data-parallel learners must agree on, as one small interface: averaged gradients,
global statistics of a minibatch, and the decisions every rank must take together.

:data:`SINGLE` is the one-learner case (no communication). :class:`TorchCollective` runs over a
``torch.distributed`` process group (gloo on CPU, NCCL on CUDA): gradients are flattened into
buckets and averaged with one ring all-reduce per bucket, between ``backward`` and the optimizer
step (what DDP does, without wrapping the model, so PPO's loss stays as it is).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

import torch
from torch import Tensor

BUCKET_BYTES = 25 * 1024 * 1024
"""Gradients are all-reduced in buckets of about this size (DDP's default)."""


class Collective(Protocol):
    """The operations PPO needs from its peers."""

    world: int
    """Learners in the group (1: no peers)."""

    def average(self, tensors: Sequence[Tensor]) -> None:
        """Replace each tensor by its mean over the group, in place."""

    def sum(self, values: Tensor) -> Tensor:
        """The elementwise sum of ``values`` over the group."""

    def any(self, flag: bool) -> bool:
        """Whether ``flag`` is true on any rank (every rank gets the same answer)."""

    def broadcast(self, tensors: Sequence[Tensor]) -> None:
        """Overwrite each tensor with rank 0's, in place."""


class Single:
    """The group of one: nothing to communicate."""

    world = 1

    def average(self, tensors: Sequence[Tensor]) -> None:
        """Nothing to average with."""

    def sum(self, values: Tensor) -> Tensor:
        """The values themselves."""
        return values

    def any(self, flag: bool) -> bool:
        """The flag itself."""
        return flag

    def broadcast(self, tensors: Sequence[Tensor]) -> None:
        """Rank 0 is this one."""


SINGLE = Single()
"""The collective of a learner without peers."""


class TorchCollective:
    """A ``torch.distributed`` process group as a :class:`Collective`.

    Args:
        group: The process group (None: the default group).
        bucket_bytes: Size of the flattened all-reduce buckets.
        measure_wait: Put a barrier before each gradient all-reduce and count the time spent
            there (waiting for the slowest peer's backward) in ``wait_s``, not in
            ``reduce_s`` (for benchmarks: it costs one extra round trip).

    Attributes:
        reduce_s: Seconds spent averaging gradients so far.
        wait_s: Seconds spent waiting for peers before averaging (with ``measure_wait``).
        calls_s: With ``measure_wait``, the seconds of each averaging call.
    """

    def __init__(self, group: object | None = None, bucket_bytes: int = BUCKET_BYTES,
                 measure_wait: bool = False) -> None:
        import torch.distributed as dist

        self.dist, self.group, self.bucket_bytes = dist, group, bucket_bytes
        self.world = dist.get_world_size(group)
        self.measure_wait = measure_wait
        self.reduce_s = self.wait_s = 0.0
        self.calls_s: list[float] = []
        self._flats: dict[tuple, Tensor] = {}

    def average(self, tensors: Sequence[Tensor]) -> None:
        """Flatten into buckets, one all-reduce per bucket, divide by the world size, copy
        back. (With ``measure_wait`` the peers meet at a barrier after the flattening, so the
        time counted is this rank's work, not the slower peer's backward.)"""
        start = time.perf_counter()
        buckets = _buckets(list(tensors), self.bucket_bytes)
        flats = [torch.cat([t.reshape(-1) for t in b], out=self._flat(i, b))
                 for i, b in enumerate(buckets)]
        took = time.perf_counter() - start
        if self.measure_wait:
            waited = time.perf_counter()
            self.dist.barrier(group=self.group)
            self.wait_s += time.perf_counter() - waited
        start = time.perf_counter()
        for bucket, flat in zip(buckets, flats):
            self.dist.all_reduce(flat, group=self.group)
            flat /= self.world
            _unflatten_into(flat, bucket)
        took += time.perf_counter() - start
        self.reduce_s += took
        if self.measure_wait:
            self.calls_s.append(took)

    def _flat(self, index: int, bucket: list[Tensor]) -> Tensor:
        """The bucket's flat buffer, allocated once and reused (gloo then reduces the same
        memory every step, as a bare all-reduce loop does)."""
        key = (index, sum(t.numel() for t in bucket), bucket[0].dtype, bucket[0].device)
        if key not in self._flats:
            self._flats[key] = torch.empty(key[1], dtype=key[2], device=key[3])
        return self._flats[key]

    def sum(self, values: Tensor) -> Tensor:
        """All-reduce (sum) of a copy of ``values``."""
        out = values.detach().clone()
        self.dist.all_reduce(out, group=self.group)
        return out

    def any(self, flag: bool) -> bool:
        """All-reduce (max) of the flag."""
        value = torch.tensor([1.0 if flag else 0.0])
        self.dist.all_reduce(value, op=self.dist.ReduceOp.MAX, group=self.group)
        return bool(value.item() > 0)

    def broadcast(self, tensors: Sequence[Tensor]) -> None:
        """One broadcast from rank 0 per bucket of flattened tensors."""
        with torch.no_grad():
            for bucket in _buckets(list(tensors), self.bucket_bytes):
                flat = torch.cat([t.reshape(-1) for t in bucket])
                self.dist.broadcast(flat, src=0, group=self.group)
                _unflatten_into(flat, bucket)


def _buckets(tensors: list[Tensor], limit: int) -> list[list[Tensor]]:
    """Consecutive tensors grouped into buckets of at most ``limit`` bytes (at least one each),
    split where the dtype or device changes."""
    out: list[list[Tensor]] = []
    size = 0
    for t in tensors:
        nbytes = t.numel() * t.element_size()
        same = out and out[-1][0].dtype == t.dtype and out[-1][0].device == t.device
        if not same or size + nbytes > limit:
            out.append([])
            size = 0
        out[-1].append(t)
        size += nbytes
    return out


def _unflatten_into(flat: Tensor, bucket: list[Tensor]) -> None:
    """Copy consecutive slices of ``flat`` back into the bucket's tensors."""
    offset = 0
    for t in bucket:
        t.copy_(flat[offset:offset + t.numel()].view_as(t))
        offset += t.numel()


def global_normalize(x: Tensor, collective: Collective, eps: float = 1e-8) -> Tensor:
    """Standardise with the mean and (unbiased) standard deviation over the whole group's
    minibatch: what one learner holding every rank's rows would compute."""
    if collective.world == 1:
        return (x - x.mean()) / (x.std() + eps)
    stats = collective.sum(torch.stack([x.sum(), (x * x).sum(),
                                        torch.tensor(float(x.numel()), dtype=x.dtype,
                                                     device=x.device)]))
    total, squares, n = stats[0], stats[1], stats[2]
    mean = total / n
    var = (squares - n * mean * mean) / (n - 1)
    return (x - mean) / (var.clamp_min(0).sqrt() + eps)
