"""Per-client token buckets: each client may sustain ``rate_per_s`` uploads with bursts of
``burst``; above that the gateway answers 429 with the seconds to wait. One gateway process
keeps its buckets in memory (:class:`RateLimiter`); several worker processes share theirs in
Redis (:class:`SharedRateLimiter`), so a client's limit holds whichever worker it reaches.
Bytes are counted too (``rate_bytes_per_s``, ``burst_bytes``), by a :class:`RateLimiter` of
each process whose tokens are bytes: that limit protects the process's own CPU.

A worker of a shared bucket takes tokens from Redis a few at a time (a lease of at most a
tenth of a second of the rate, see :func:`lease_size`) and spends them without asking Redis
again, for at most ``LEASE_TTL_S``: an upload then costs no Redis round trip for its limit,
and can be answered synchronously. Leasing never lets a client past its limit (leased tokens
left the shared bucket); it can only refuse a client spread over several workers a little
early, while another worker holds some of its tokens."""

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

    def take(self, key: str, cost: float = 1.0) -> float:
        """Spend ``cost`` tokens of ``key``'s bucket (at most ``burst``): 0.0 if allowed, else
        the seconds until they are there (nothing spent then)."""
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = [self.burst, now]
        tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        if tokens >= cost:
            bucket[0] = tokens - cost
            return 0.0
        bucket[0] = tokens
        return (cost - tokens) / self.rate


TAKE_MANY = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local ttl = math.ceil(burst / rate) + 1
local out = {}
for i = 1, #KEYS do
  local most = tonumber(ARGV[i + 2])
  local bucket = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens = tonumber(bucket[1]) or burst
  local at = tonumber(bucket[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
  local granted, wait = 0, 0
  if tokens >= 1 then
    granted = math.min(most, math.floor(tokens)); tokens = tokens - granted
  else
    wait = (1 - tokens) / rate
  end
  redis.call('HSET', KEYS[i], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('EXPIRE', KEYS[i], ttl)
  out[#out + 1] = granted; out[#out + 1] = tostring(wait)
end
return out
"""
"""KEYS: one bucket per call. ARGV: rate, burst, then the most tokens each call wants. Returns
two values per call: the tokens granted (at least 1 when any is there, at most that many) and,
when none is granted, the seconds until one is (as a string). A bucket idle long enough to be
full again expires."""

LEASE_TTL_S = 1.0
"""Longest a worker spends tokens it took from a shared bucket (then they are dropped)."""

MAX_LEASES = 10_000
"""Leases one worker keeps before it forgets the expired ones."""


def lease_size(rate_per_s: float, burst: int, workers: int) -> int:
    """Tokens a worker takes from a shared bucket at once: at most a tenth of a second of the
    rate and a quarter of a burst per worker, so that a client spread over the workers is
    never refused much early (1, every upload asking Redis, for small limits)."""
    return max(1, min(int(rate_per_s / 10), int(burst) // (4 * max(1, workers))))


class SharedRateLimiter:
    """The same token buckets kept in Redis, so that every worker process of one gateway
    spends from the same bucket of a client; the calls of one event-loop turn share one
    script call, on Redis's clock. Tokens are taken ``lease`` at a time (see the module).

    Args:
        redis: The gateway's asyncio Redis client.
        prefix: Key prefix (``[gateway] prefix``); buckets are ``<prefix>:rate:<key>``.
        rate_per_s: Tokens added per second.
        burst: Bucket size (and the initial fill).
        lease: Most tokens taken from Redis at once (:func:`lease_size`).
        clock: Monotonic seconds; injectable for tests.
    """

    def __init__(self, redis: Redis, prefix: str, rate_per_s: float, burst: int,
                 lease: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        _check_bucket(rate_per_s, burst)
        self.prefix = prefix
        self.lease = max(1, int(lease))
        self._clock = clock
        self._leases: dict[str, list[float]] = {}  # key: [tokens left, expires at]
        self._leasing: set[str] = set()  # keys whose lease is being asked for
        self._take = ScriptBatcher(redis, TAKE_MANY, (), (repr(float(rate_per_s)),
                                                          str(int(burst))), width=2)

    def take_now(self, key: str) -> bool:
        """Spend one token of ``key``'s lease held by this process, if it holds one (no Redis;
        False: ask :meth:`take`)."""
        held = self._leases.get(key)
        if held is None or held[0] < 1 or held[1] <= self._clock():
            return False
        held[0] -= 1
        return True

    async def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if allowed, else the seconds until one is
        (Redis errors raised)."""
        if self.take_now(key):
            return 0.0
        leasing = key not in self._leasing  # one lease asked for at a time; others ask for 1
        if leasing:
            self._leasing.add(key)
        try:
            granted, wait = await self._take(f"{self.prefix}:rate:{key}",
                                             self.lease if leasing else 1)
        finally:
            if leasing:
                self._leasing.discard(key)
        granted = int(granted)
        if granted < 1:
            return float(wait)
        if granted > 1:
            self._hold(key, granted - 1)
        return 0.0

    def _hold(self, key: str, tokens: int) -> None:
        """Keep ``tokens`` of ``key`` to spend for LEASE_TTL_S (older expired leases
        forgotten once there are many)."""
        now = self._clock()
        if len(self._leases) >= MAX_LEASES:
            self._leases = {k: v for k, v in self._leases.items() if v[1] > now}
        self._leases[key] = [float(tokens), now + LEASE_TTL_S]
