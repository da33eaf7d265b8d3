"""Uploads that reach Redis in the same batch (one script call) are decided one by one, in
order: each is stored once, a repeat within the batch is a duplicate of the first, and the
backlog cap counts the entries the batch itself adds."""

from __future__ import annotations

import asyncio
import time
import uuid

import numpy as np
import pytest
import redis
from redis.asyncio import Redis

from msagent.experience.records import EpisodeRecord, Provenance
from msagent.experience.stream_keys import StreamKeys
from msagent.gateway.errors import Refused
from msagent.gateway.producer import StreamProducer


def _record(episode_id: str) -> EpisodeRecord:
    """A 3-step record of ``episode_id``."""
    return EpisodeRecord("cartpole", episode_id, np.zeros((3, 4), np.float32),
                         np.zeros(3, np.int64), np.ones(3, np.float32), None, True, False,
                         Provenance("alice", time.time()))


def _add_together(redis_url: str, keys: StreamKeys, max_backlog: int, ids: list[str],
                  ) -> list[object]:
    """Add records of these ids concurrently (one batch); each result or Refused."""
    async def main() -> list[object]:
        client = Redis.from_url(redis_url)
        producer = StreamProducer(client, keys, ttl_s=60, max_backlog=max_backlog)
        try:
            await producer.ensure_group()
            records = [_record(i) for i in ids]
            return await asyncio.gather(*(producer.add(r, r.to_msgpack()) for r in records),
                                        return_exceptions=True)
        finally:
            await client.aclose()

    return asyncio.run(main())


@pytest.fixture
def keys(redis_url: str):
    """A key prefix of this test's own, deleted afterwards."""
    made = StreamKeys(f"test:{uuid.uuid4().hex[:12]}")
    yield made
    plain = redis.Redis.from_url(redis_url)
    for key in plain.scan_iter(f"{made.prefix}:*"):
        plain.delete(key)
    plain.close()


def test_a_repeat_within_one_batch_is_a_duplicate_of_the_first(redis_url: str,
                                                               keys: StreamKeys):
    results = _add_together(redis_url, keys, 100, ["a", "b", "a", "c", "b"])
    assert [r.duplicate for r in results] == [False, False, True, False, True]
    assert results[2].entry == results[0].entry and results[4].entry == results[1].entry
    plain = redis.Redis.from_url(redis_url)
    assert plain.xlen(keys.stream) == 3
    plain.close()


def test_the_backlog_cap_counts_what_the_batch_adds(redis_url: str, keys: StreamKeys):
    assert not _add_together(redis_url, keys, 3, ["first"])[0].duplicate
    results = _add_together(redis_url, keys, 3, ["x", "first", "y", "z", "w"])
    assert [type(r).__name__ for r in results] == ["Added", "Added", "Added", "Refused",
                                                   "Refused"]
    assert results[1].duplicate and not results[0].duplicate and not results[2].duplicate
    assert all(isinstance(r, Refused) and r.status == 503 for r in results[3:])
    plain = redis.Redis.from_url(redis_url)
    assert plain.xlen(keys.stream) == 3  # first, x, y
    assert plain.exists(keys.idempotency("cartpole", "alice", "z", 0)) == 0  # z may retry
    plain.close()
