"""Table configuration as plain, typed data (checked when built), and common presets."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from msagent.buffer.rate_limiter import RateLimiterConfig
from msagent.buffer.removers import REMOVER_KINDS
from msagent.buffer.samplers import SAMPLER_KINDS, make_sampler
from msagent.errors import ConfigError


@dataclass(frozen=True)
class TableConfig:
    """One table of a replay buffer, composed like TorchRL's (storage, sampler, writer).

    Attributes:
        name: Name callers use to reach the table.
        max_size: Capacity; a full table evicts one item (chosen by ``remover``) per insert.
        sampler: ``"uniform"``, ``"prioritized"``, ``"fifo"`` or ``"lifo"``.
        sampler_params: Keyword arguments of the sampler, e.g. ``{"alpha": 0.6, "beta": 0.4}``.
        remover: ``"fifo"`` (evict the oldest) or ``"lifo"`` (evict the newest).
        max_times_sampled: Remove an item once drawn this many times; 0 means never.
        rate_limiter: Minimum size and sample/insert ratio, enforced by blocking.
        seed: Seed of the sampler's random generator, for reproducible draws.
    """

    name: str
    max_size: int
    sampler: str = "uniform"
    sampler_params: Mapping[str, Any] = field(default_factory=dict)
    remover: str = "fifo"
    max_times_sampled: int = 0
    rate_limiter: RateLimiterConfig = field(default_factory=RateLimiterConfig)
    seed: int | None = None

    def __post_init__(self) -> None:
        """Refuse a config that could not build a working table, naming the bad field."""
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"table name must be a non-empty str, got {self.name!r}")
        if self.max_size < 1:
            raise ConfigError(f"table {self.name!r}: max_size must be >= 1, got {self.max_size}")
        if self.max_times_sampled < 0:
            raise ConfigError(
                f"table {self.name!r}: max_times_sampled must be >= 0 (0 = unlimited),"
                f" got {self.max_times_sampled}"
            )
        self._check_parts()

    def _check_parts(self) -> None:
        """Check the sampler, remover and rate limiter fit together and with max_size."""
        self._check_kind("remover", self.remover, REMOVER_KINDS)
        self._check_kind("sampler", self.sampler, SAMPLER_KINDS)
        try:
            make_sampler(self.sampler, 1, None, self.sampler_params)
        except ConfigError as exc:
            raise ConfigError(f"table {self.name!r}: {exc}") from None
        if self.rate_limiter.min_size_to_sample > self.max_size:
            raise ConfigError(
                f"table {self.name!r}: min_size_to_sample={self.rate_limiter.min_size_to_sample}"
                f" exceeds max_size={self.max_size}, so sampling could never start"
            )

    def _check_kind(self, part: str, kind: str, known: tuple[str, ...]) -> None:
        """Refuse an unknown sampler or remover name, listing the known ones."""
        if kind not in known:
            raise ConfigError(
                f"table {self.name!r}: unknown {part} kind {kind!r}; known kinds: {list(known)}"
            )


def on_policy_queue(name: str, max_size: int, seed: int | None = None) -> TableConfig:
    """A FIFO queue for on-policy training: every item is sampled exactly once, oldest first.

    FIFO sampler + FIFO remover + ``max_times_sampled=1``, with Reverb's Queue rate limiter:
    inserts block while the queue is full and samples block until enough items are queued.
    """
    if max_size < 1:
        raise ConfigError(f"queue {name!r}: max_size must be >= 1, got {max_size}")
    return TableConfig(
        name=name,
        max_size=max_size,
        sampler="fifo",
        remover="fifo",
        max_times_sampled=1,
        rate_limiter=RateLimiterConfig.queue(max_size),
        seed=seed,
    )
