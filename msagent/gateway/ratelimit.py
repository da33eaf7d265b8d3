"""Per-client token buckets: each client may sustain ``rate_per_s`` uploads with bursts of
``burst``; above that the gateway answers 429 with the seconds to wait."""

from __future__ import annotations

import time
from collections.abc import Callable


class RateLimiter:
    """One token bucket per key, refilled continuously on a monotonic clock; O(1) per call.

    Args:
        rate_per_s: Tokens added per second.
        burst: Bucket size (and the initial fill).
        clock: Monotonic seconds; injectable for tests.
    """

    def __init__(self, rate_per_s: float, burst: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not rate_per_s > 0 or burst < 1:
            raise ValueError(f"need rate_per_s > 0 and burst >= 1, got {rate_per_s}, {burst}")
        self.rate = float(rate_per_s)
        self.burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, list[float]] = {}

    def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if allowed, else the seconds until one is."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = [self.burst, now]
        tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        if tokens >= 1.0:
            bucket[0] = tokens - 1.0
            return 0.0
        bucket[0] = tokens
        return (1.0 - tokens) / self.rate
