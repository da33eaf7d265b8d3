"""Reverb's rate limiter: keeps the sample/insert ratio of a table within a band by blocking.

As in Reverb (``reverb/cc/rate_limiter.cc``, ``reverb/rate_limiters.py``), the limiter counts
``inserts``, ``samples`` and ``deletes`` and tracks ``diff = inserts * samples_per_insert -
samples``:

* a sample of n may proceed when ``inserts - deletes >= min_size_to_sample`` and
  ``diff - n >= min_diff``;
* an insert of n may proceed when ``inserts + n - deletes <= min_size_to_sample`` (filling up
  to the minimum size is free) or ``(inserts + n) * samples_per_insert - samples <= max_diff``.

A single ``error_buffer`` e means ``[min_diff, max_diff] = offset -/+ e`` with ``offset =
samples_per_insert * min_size_to_sample`` (Reverb's SampleToInsertRatio); a pair is used as
``(min_diff, max_diff)`` unchanged (Reverb's Queue and Stack limiters). Without
``samples_per_insert`` the limiter only enforces the minimum size (Reverb's MinSize).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from msagent.errors import ConfigError, RateLimitTimeout

log = logging.getLogger(__name__)

ErrorBuffer = float | tuple[float, float]


@dataclass(frozen=True)
class RateLimiterConfig:
    """Settings of a table's rate limiter (checked when built, like Reverb's constructors)."""

    min_size_to_sample: int = 1
    samples_per_insert: float | None = None
    error_buffer: ErrorBuffer | None = None

    def __post_init__(self) -> None:
        """Refuse settings that would deadlock or mean nothing."""
        if self.min_size_to_sample < 1:
            raise ConfigError(f"min_size_to_sample must be >= 1, got {self.min_size_to_sample}")
        if (self.samples_per_insert is None) != (self.error_buffer is None):
            raise ConfigError("samples_per_insert and error_buffer must be given together")
        if self.samples_per_insert is not None:
            _check_ratio(self)

    @classmethod
    def queue(cls, max_size: int) -> RateLimiterConfig:
        """Reverb's Queue limiter: inserts block when full, samples block when empty."""
        return cls(1, 1.0, (0.0, float(max_size)))

    def diff_range(self) -> tuple[float, float, float]:
        """Return (samples_per_insert, min_diff, max_diff), the band ``diff`` must stay in."""
        if self.samples_per_insert is None or self.error_buffer is None:
            return 1.0, float("-inf"), float("inf")
        spi = float(self.samples_per_insert)
        if isinstance(self.error_buffer, tuple):
            return spi, float(self.error_buffer[0]), float(self.error_buffer[1])
        offset = spi * self.min_size_to_sample
        return spi, offset - self.error_buffer, offset + self.error_buffer


def _check_ratio(config: RateLimiterConfig) -> None:
    """Apply Reverb's SampleToInsertRatio checks (a pair is trusted as in Queue and Stack)."""
    spi, min_diff, max_diff = config.diff_range()
    if spi <= 0:
        raise ConfigError(f"samples_per_insert must be > 0, got {spi}")
    if not min_diff < max_diff:
        raise ConfigError(f"error_buffer range ({min_diff}, {max_diff}) is empty")
    if not isinstance(config.error_buffer, tuple) and max_diff - min_diff < 2 * max(1.0, spi):
        raise ConfigError(
            f"error_buffer={config.error_buffer} must be >= max(1.0, samples_per_insert)"
            f"={max(1.0, spi)} as smaller values could block samples and/or inserts forever"
        )
    _check_offset(spi * config.min_size_to_sample, min_diff, max_diff)


def _check_offset(offset: float, min_diff: float, max_diff: float) -> None:
    """Refuse a band that deadlocks once min_size_to_sample items are in (Reverb's check)."""
    if min_diff > offset:
        raise ConfigError(
            f"min_diff={min_diff} is above samples_per_insert * min_size_to_sample={offset}:"
            " sampling would deadlock as soon as min_size_to_sample items are inserted"
        )
    if max_diff < offset:
        log.warning("max_diff=%s < samples_per_insert * min_size_to_sample=%s", max_diff, offset)


class RateLimiter:
    """Blocks inserts or samples (on a ``threading.Condition``) to hold the sample/insert ratio.

    All methods take ``self.condition`` (re-entrant), so a table may hold it around a whole
    operation and use it as its own lock, as Reverb's table shares its mutex with its limiter.

    Args:
        min_size_to_sample: Items the table must hold before any sample proceeds.
        samples_per_insert: Target number of draws per inserted item; None: no ratio.
        error_buffer: Tolerance around the ratio: a number e, or a (min_diff, max_diff) pair.
        name: The table's name, used in RateLimitTimeout messages.

    Raises:
        ConfigError: On settings Reverb refuses (see ``RateLimiterConfig``).
    """

    def __init__(
        self,
        min_size_to_sample: int = 1,
        samples_per_insert: float | None = None,
        error_buffer: ErrorBuffer | None = None,
        name: str = "table",
    ) -> None:
        self.config = RateLimiterConfig(min_size_to_sample, samples_per_insert, error_buffer)
        self.samples_per_insert, self.min_diff, self.max_diff = self.config.diff_range()
        self.min_size_to_sample = min_size_to_sample
        self.name = name
        self.condition = threading.Condition(threading.RLock())
        self.inserts = self.samples = self.deletes = 0

    @classmethod
    def from_config(cls, config: RateLimiterConfig, name: str = "table") -> RateLimiter:
        """Build the limiter a table config describes."""
        return cls(config.min_size_to_sample, config.samples_per_insert, config.error_buffer, name)

    @property
    def diff(self) -> float:
        """``inserts * samples_per_insert - samples``, the quantity kept in the band."""
        return self.inserts * self.samples_per_insert - self.samples

    def can_insert(self, n: int = 1) -> bool:
        """Whether n more inserts keep the table within the band (Reverb's CanInsert)."""
        with self.condition:
            if self.inserts + n - self.deletes <= self.min_size_to_sample:
                return True
            return (self.inserts + n) * self.samples_per_insert - self.samples <= self.max_diff

    def can_sample(self, n: int = 1) -> bool:
        """Whether n more samples keep the table within the band (Reverb's CanSample)."""
        with self.condition:
            if self.inserts - self.deletes < self.min_size_to_sample:
                return False
            return self.diff - n >= self.min_diff

    def max_sample_batch(self) -> float:
        """Upper bound on the n one sample call can ever be granted (to refuse hopeless calls)."""
        ceiling = max(self.max_diff, self.samples_per_insert * self.min_size_to_sample)
        return ceiling - self.min_diff

    def record_insert(self, n: int = 1) -> None:
        """Count inserts and wake waiters whose condition may now hold."""
        self._record(inserts=n)

    def record_sample(self, n: int = 1) -> None:
        """Count samples and wake waiters whose condition may now hold."""
        self._record(samples=n)

    def record_delete(self, n: int = 1) -> None:
        """Count items that left the table (evicted or sampled out) and wake waiters."""
        self._record(deletes=n)

    def await_insert(self, n: int = 1, timeout_s: float | None = None, detail: str = "") -> float:
        """Block until n inserts may proceed; return seconds blocked or raise RateLimitTimeout."""
        return self.wait("insert", n, lambda: self.can_insert(n), timeout_s, detail)

    def await_sample(
        self,
        n: int = 1,
        timeout_s: float | None = None,
        also: Callable[[], bool] | None = None,
        detail: str = "",
    ) -> float:
        """Block until n samples may proceed (and ``also()`` holds); return seconds blocked."""
        ready = (lambda: self.can_sample(n) and also()) if also else (lambda: self.can_sample(n))
        return self.wait("sample", n, ready, timeout_s, detail)

    def wait(
        self, side: str, n: int, ready: Callable[[], bool], timeout_s: float | None, detail: str
    ) -> float:
        """Wait on the condition until ``ready()``; never sleeps holding the lock."""
        with self.condition:
            if ready():
                return 0.0
            start = time.monotonic()
            deadline = None if timeout_s is None else start + timeout_s
            while not ready():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    waited = time.monotonic() - start
                    raise RateLimitTimeout(self._timeout_message(side, n, waited, detail))
                self.condition.wait(left)
            return time.monotonic() - start

    def describe(self) -> str:
        """One line with the counts and band, for errors and logs."""
        with self.condition:
            return (
                f"size={self.inserts - self.deletes}, inserts={self.inserts}, "
                f"samples={self.samples}, min_size_to_sample={self.min_size_to_sample}, "
                f"inserts*{self.samples_per_insert:g}-samples={self.diff:g} "
                f"kept within [{self.min_diff:g}, {self.max_diff:g}]"
            )

    def _record(self, inserts: int = 0, samples: int = 0, deletes: int = 0) -> None:
        """Update counts under the lock and notify every waiter (predicates differ)."""
        with self.condition:
            self.inserts += inserts
            self.samples += samples
            self.deletes += deletes
            self.condition.notify_all()

    def _timeout_message(self, side: str, n: int, waited: float, detail: str) -> str:
        """Name the table, the blocked side and the state that blocked it."""
        return (
            f"table {self.name!r}: {side} of {n} item(s) timed out after waiting {waited:.3g} s"
            f"{detail} ({self.describe()})"
        )
