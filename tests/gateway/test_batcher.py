"""The Lua-call batcher: concurrent calls share one script call per batch (at most MAX_BATCH
callers), each gets its own values of the reply, an error reply fails every caller of its
batch, and a Redis that forgot the script (restart, SCRIPT FLUSH) is given it again."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from redis import exceptions as rex
from redis.asyncio import Redis

from msagent.gateway.batcher import MAX_BATCH, ScriptBatcher

ECHO_EACH = """
redis.call('INCR', KEYS[1])
local out = {}
for i = 2, #KEYS do
  if ARGV[i] == 'fail' then return redis.error_reply('asked to fail') end
  out[#out + 1] = KEYS[i]
  out[#out + 1] = ARGV[1] .. ARGV[i]
end
return out
"""
"""Counts its calls in KEYS[1]; answers each caller its key and the shared prefix + its arg."""


def _run(redis_url: str, body, script: str = ECHO_EACH, width: int = 2) -> object:
    async def main():
        redis = Redis.from_url(redis_url)
        counter = f"test:{uuid.uuid4().hex}"
        try:
            batcher = ScriptBatcher(redis, script, (counter,), ("p-",), width)
            return await body(redis, batcher, counter)
        finally:
            await redis.delete(counter)
            await redis.aclose()

    return asyncio.run(main())


def test_concurrent_calls_share_one_script_call_per_batch(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        await batcher("k", "warm-up")  # loads the script
        await redis.delete(counter)
        results = await asyncio.gather(*(batcher(f"k{i}", f"v{i}")
                                         for i in range(MAX_BATCH + 44)))
        return results, int(await redis.get(counter))

    results, calls = _run(redis_url, body)
    assert results == [[f"k{i}".encode(), f"p-v{i}".encode()] for i in range(MAX_BATCH + 44)]
    assert calls == 2  # MAX_BATCH callers, then the other 44


def test_a_lone_call_is_answered_at_once(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        first = await batcher("a", "1")
        second = await batcher("b", "2")
        return first, second, int(await redis.get(counter))

    assert _run(redis_url, body) == ([b"a", b"p-1"], [b"b", b"p-2"], 2)


def test_an_error_reply_fails_every_caller_of_its_batch(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        failed = await asyncio.gather(batcher("a", "1"), batcher("b", "fail"),
                                      batcher("c", "3"), return_exceptions=True)
        after = await batcher("d", "4")  # the next batch is unaffected
        return failed, after

    failed, after = _run(redis_url, body)
    assert all(isinstance(r, rex.ResponseError) and "asked to fail" in str(r) for r in failed)
    assert after == [b"d", b"p-4"]


def test_a_reply_of_the_wrong_length_fails_every_caller(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        return await asyncio.gather(batcher("a", "1"), batcher("b", "2"),
                                    return_exceptions=True)

    results = _run(redis_url, body, script="return {1}")
    assert all(isinstance(r, rex.ResponseError) and "for 2 callers" in str(r) for r in results)


def test_a_forgotten_script_is_loaded_again(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        await redis.script_flush()
        got = await asyncio.gather(batcher("a", "1"), batcher("b", "2"))
        return got, int(await redis.get(counter))

    assert _run(redis_url, body) == ([[b"a", b"p-1"], [b"b", b"p-2"]], 1)  # ran once


def test_a_dead_redis_fails_every_caller(redis_url: str):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        dead = Redis.from_url("redis://127.0.0.1:1/0")
        try:
            lost = ScriptBatcher(dead, ECHO_EACH, ("c",), ("p-",), 2)
            return await asyncio.gather(lost("k", "a"), lost("k", "b"),
                                        return_exceptions=True)
        finally:
            await dead.aclose()

    results = _run(redis_url, body)
    assert len(results) == 2
    assert all(isinstance(r, rex.ConnectionError) for r in results)


@pytest.mark.parametrize("cancelled", [0, 1])
def test_a_cancelled_caller_does_not_disturb_the_others(redis_url: str, cancelled: int):
    async def body(redis: Redis, batcher: ScriptBatcher, counter: str):
        calls = [asyncio.ensure_future(batcher(f"k{i}", str(i))) for i in range(2)]
        await asyncio.sleep(0)  # both queued
        calls[cancelled].cancel()
        return await asyncio.gather(*calls, return_exceptions=True)

    results = _run(redis_url, body)
    assert isinstance(results[cancelled], asyncio.CancelledError)
    kept = 1 - cancelled
    assert results[kept] == [f"k{kept}".encode(), f"p-{kept}".encode()]
