"""The Lua-call batcher: concurrent calls share one pipeline, each gets its own result or
error, and a Redis that forgot the script (restart, SCRIPT FLUSH) is given it again."""

from __future__ import annotations

import asyncio
import uuid

from redis import exceptions as rex
from redis.asyncio import Redis

from msagent.gateway.batcher import MAX_BATCH, ScriptBatcher

ECHO_OR_FAIL = """
if ARGV[1] == 'fail' then return redis.error_reply('asked to fail') end
redis.call('INCR', KEYS[1])
return ARGV[1]
"""


def _run(redis_url: str, body) -> object:
    async def main():
        redis = Redis.from_url(redis_url)
        try:
            return await body(redis, ScriptBatcher(redis, ECHO_OR_FAIL))
        finally:
            await redis.aclose()

    return asyncio.run(main())


def test_concurrent_calls_share_pipelines_and_get_their_own_results(redis_url: str):
    key = f"test:{uuid.uuid4().hex}"
    sizes: list[int] = []

    async def body(redis: Redis, batcher: ScriptBatcher):
        await batcher((key,), ("warm-up",))  # loads the script
        await redis.delete(key)
        send = batcher._pipeline

        async def counting(batch):
            sizes.append(len(batch))
            return await send(batch)

        batcher._pipeline = counting
        calls = [batcher((key,), (f"v{i}",)) for i in range(MAX_BATCH + 44)]
        calls.insert(7, batcher((key,), ("fail",)))
        results = await asyncio.gather(*calls, return_exceptions=True)
        count = int(await redis.get(key))
        await redis.delete(key)
        return results, count

    results, count = _run(redis_url, body)
    assert sizes == [MAX_BATCH, 45]
    assert isinstance(results[7], rex.ResponseError) and "asked to fail" in str(results[7])
    rest = results[:7] + results[8:]
    assert rest == [f"v{i}".encode() for i in range(MAX_BATCH + 44)]
    assert count == MAX_BATCH + 44


def test_a_forgotten_script_is_loaded_again(redis_url: str):
    key = f"test:{uuid.uuid4().hex}"

    async def body(redis: Redis, batcher: ScriptBatcher):
        await redis.script_flush()
        got = await asyncio.gather(batcher((key,), ("a",)), batcher((key,), ("b",)))
        count = int(await redis.get(key))
        await redis.delete(key)
        return got, count

    assert _run(redis_url, body) == ([b"a", b"b"], 2)  # each ran once


def test_a_dead_redis_fails_every_caller(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher):
        dead = Redis.from_url("redis://127.0.0.1:1/0")
        try:
            lost = ScriptBatcher(dead, ECHO_OR_FAIL)
            return await asyncio.gather(lost(("k",), ("a",)), lost(("k",), ("b",)),
                                        return_exceptions=True)
        finally:
            await dead.aclose()

    results = _run(redis_url, body)
    assert all(isinstance(r, rex.ConnectionError) for r in results)
