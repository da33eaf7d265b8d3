"""Putting checked records on the Redis stream exactly once per (game, client, episode, part).

One Lua script does the whole decision atomically on the server, for every upload that
arrived in the same event-loop turn (:class:`~msagent.gateway.batcher.ScriptBatcher`), in one
round trip. For each upload, in arrival order:

1. its idempotency key exists: a retry; answer the entry id stored there (nothing added);
2. the stream already holds ``max_backlog`` entries: the store lags; refuse (503), so no
   more than ``max_backlog`` entries ever wait;
3. else ``XADD`` the record (never trimmed: unconsumed entries are never dropped) and store its
   entry id under the idempotency key with the configured TTL.

A key is looked up before its ``XADD`` and written after it (the script runs atomically, so
this equals ``SET NX`` first), so a failing ``XADD`` leaves no key that would turn the client's
retry into a "duplicate" of nothing. Should Redis fail part-way through a batch (out of
memory, say), every upload of the batch is answered 503; those added before the failure
answer "duplicate" with their entry id when retried, so none is stored twice or lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from redis import exceptions as rex
from redis.asyncio import Redis

from msagent.experience.records import EpisodeRecord
from msagent.experience.stream_keys import CONSUMER_GROUP, RECORD_FIELD, StreamKeys
from msagent.gateway.batcher import ScriptBatcher
from msagent.gateway.errors import Refused, retry_after

ADD_MANY = """
local stream, ttl, cap, field = KEYS[1], ARGV[1], tonumber(ARGV[2]), ARGV[3]
local backlog = redis.call('XLEN', stream)
local out = {}
for i = 2, #KEYS do
  local old = redis.call('GET', KEYS[i])
  if old then
    out[#out + 1] = 0; out[#out + 1] = old
  elseif backlog >= cap then
    out[#out + 1] = 2; out[#out + 1] = ''
  else
    local id = redis.call('XADD', stream, '*', field, ARGV[i + 2])
    redis.call('SET', KEYS[i], id, 'EX', ttl)
    backlog = backlog + 1
    out[#out + 1] = 1; out[#out + 1] = id
  end
end
return out
"""
"""KEYS: the stream, then one idempotency key per upload. ARGV: TTL seconds, max backlog,
field name, then one record's bytes per upload. Returns two values per upload: ``1, id``
added, ``0, id`` duplicate, ``2, ''`` backlog too high."""

UNAVAILABLE = "the experience stream is unavailable; retry later"
"""The reason of a 503 because Redis cannot be reached (or cannot write now)."""

UNAVAILABLE_RETRY_S = 1.0
"""Retry-After of a 503 because Redis cannot be reached."""

BACKLOG_RETRY_S = 5.0
"""Retry-After of a 503 because the stream's backlog is too high."""

_BUSY_PREFIXES = ("OOM", "READONLY", "LOADING", "MASTERDOWN", "BUSY", "TRYAGAIN")
"""Redis error replies that mean "not now" (503) rather than a bug (500)."""


@dataclass(frozen=True)
class Added:
    """Where a record is on the stream, and whether an earlier upload had already put it there."""

    entry: str
    duplicate: bool


class StreamProducer:
    """The gateway's side of the stream: exactly-once adds, the consumer group, health, stats.

    Args:
        redis: An asyncio Redis client (``decode_responses=False``).
        keys: The key names (``[gateway] prefix``).
        ttl_s: How long an idempotency key is remembered.
        max_backlog: Most entries the stream may hold before uploads are refused.
    """

    def __init__(self, redis: Redis, keys: StreamKeys, ttl_s: int, max_backlog: int) -> None:
        self.redis = redis
        self.keys = keys
        self._stream = keys.stream
        self._add_many = ScriptBatcher(redis, ADD_MANY, (self._stream,),
                                       (int(ttl_s), int(max_backlog), RECORD_FIELD), width=2)
        self._group_ready = False

    async def add(self, record: EpisodeRecord, data: bytes) -> Added:
        """Put a checked record's stream entry ``data`` on the stream once (the record says
        which upload it is); Refused(503) when Redis cannot take it."""
        try:  # unavailable_as_503, inline: a context manager per upload cost ~3 % of its CPU
            if not self._group_ready:
                await self.ensure_group()
            reply = await self.submit(record, data)
        except (rex.ConnectionError, rex.TimeoutError, rex.ResponseError) as exc:
            raise self.unavailable(exc) from None
        return self.added(reply)

    @property
    def ready(self) -> bool:
        """Whether :meth:`submit` may be called (the consumer group is known to exist)."""
        return self._group_ready

    def submit(self, record: EpisodeRecord, data: bytes) -> asyncio.Future[list[Any]]:
        """:meth:`add` from synchronous code, once :attr:`ready`: the future of the script's
        reply for this upload (read it with :meth:`added`), or of the Redis error (map it
        with :meth:`unavailable`)."""
        idem = self.keys.idempotency(record.game, record.provenance.client_id,
                                     record.episode_id, record.part)
        return self._add_many.submit(idem, data)

    @staticmethod
    def added(reply: list[Any]) -> Added:
        """Where the script put the upload; Refused(503) when the backlog is too high."""
        code, entry = reply
        if code == 2:
            raise Refused(503, "the experience backlog is too high; retry later",
                          retry_after(BACKLOG_RETRY_S))
        return Added(entry.decode(), duplicate=code == 0)

    async def ensure_group(self) -> None:
        """Create the ingestion consumer group from the stream's start (so records added before
        any consumer ran are kept); an existing group is left alone."""
        try:
            await self.redis.xgroup_create(self._stream, CONSUMER_GROUP, id="0", mkstream=True)
        except rex.ResponseError as exc:
            if not str(exc).startswith("BUSYGROUP"):
                raise
        self._group_ready = True

    async def healthy(self) -> bool:
        """Whether Redis answers PING."""
        try:
            return bool(await self.redis.ping())
        except (rex.ConnectionError, rex.TimeoutError, rex.ResponseError):
            self._group_ready = False
            return False

    async def stats(self) -> dict[str, Any]:
        """Entries on the stream, entries delivered but not acknowledged, dead letters."""
        async with self.unavailable_as_503():
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xlen(self._stream)
                pipe.xlen(self.keys.dead)
                length, dead = await pipe.execute()
            try:
                pending = (await self.redis.xpending(self._stream, CONSUMER_GROUP))["pending"]
            except rex.ResponseError:  # no stream or no group yet
                pending = 0
        return {"stream": self._stream, "stream_length": length, "pending": pending,
                "dead_letters": dead}

    @contextlib.asynccontextmanager
    async def unavailable_as_503(self) -> AsyncIterator[None]:
        """Turns "Redis cannot take this now" into Refused(503) with a Retry-After (for every
        Redis call of an upload)."""
        try:
            yield
        except (rex.ConnectionError, rex.TimeoutError, rex.ResponseError) as exc:
            raise self.unavailable(exc) from None

    def unavailable(self, exc: Exception) -> Exception:
        """What to raise for a Redis error: Refused(503) when Redis cannot take it now (down,
        out of memory, read-only, loading...); the error itself when it is a bug."""
        if isinstance(exc, rex.ConnectionError | rex.TimeoutError):
            self._group_ready = False  # a restarted Redis without persistence lost the group
        elif not str(exc).startswith(_BUSY_PREFIXES):
            return exc
        return Refused(503, UNAVAILABLE, retry_after(UNAVAILABLE_RETRY_S))
