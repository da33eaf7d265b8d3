"""Per-client token buckets: each client may sustain ``rate_per_s`` uploads with bursts of
``burst``; above that the gateway answers 429 with the seconds to wait. One gateway process
keeps its buckets in memory (:class:`RateLimiter`); several worker processes share theirs in
Redis (:class:`SharedRateLimiter`), so a client's limit holds whichever worker it reaches."""

from __future__ import annotations

import time
from collections.abc import Callable

from redis.asyncio import Redis

from msagent.gateway.batcher import ScriptBatcher


def _check_bucket(rate_per_s: float, burst: int) -> None:
    """A bucket needs a positive rate and room for at least one token (ValueError if not)."""
    if not rate_per_s > 0 or burst < 1:
        raise ValueError(f"need rate_per_s > 0 and burst >= 1, got {rate_per_s}, {burst}")


class RateLimiter:
    """One token bucket per key, refilled continuously on a monotonic clock; O(1) per call.

    Args:
        rate_per_s: Tokens added per second.
        burst: Bucket size (and the initial fill).
        clock: Monotonic seconds; injectable for tests.
    """

    def __init__(self, rate_per_s: float, burst: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        _check_bucket(rate_per_s, burst)
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


TAKE_MANY = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local ttl = math.ceil(burst / rate) + 1
local out = {}
for i = 1, #KEYS do
  local cost = tonumber(ARGV[i + 2])
  local bucket = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens = tonumber(bucket[1]) or burst
  local at = tonumber(bucket[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
  local wait = 0
  if tokens >= cost then tokens = tokens - cost else wait = (cost - tokens) / rate end
  redis.call('HSET', KEYS[i], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('EXPIRE', KEYS[i], ttl)
  out[#out + 1] = tostring(wait)
end
return out
"""
"""KEYS: one bucket per call. ARGV: rate, burst, then each call's cost (1). Returns each call's
wait in seconds as a string (0: allowed). A bucket idle long enough to be full again expires."""


class SharedRateLimiter:
    """The same token buckets kept in Redis, so that every worker process of one gateway
    spends from the same bucket of a client; the calls of one event-loop turn share one
    script call, on Redis's clock.

    Args:
        redis: The gateway's asyncio Redis client.
        prefix: Key prefix (``[gateway] prefix``); buckets are ``<prefix>:rate:<key>``.
        rate_per_s: Tokens added per second.
        burst: Bucket size (and the initial fill).
    """

    def __init__(self, redis: Redis, prefix: str, rate_per_s: float, burst: int) -> None:
        _check_bucket(rate_per_s, burst)
        self.prefix = prefix
        self._take = ScriptBatcher(redis, TAKE_MANY, (), (repr(float(rate_per_s)),
                                                          str(int(burst))), width=1)

    async def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if allowed, else the seconds until one is
        (Redis errors raised)."""
        (wait,) = await self._take(f"{self.prefix}:rate:{key}", 1)
        return float(wait)
