"""Sending the concurrent requests' Lua calls to Redis together: every ``EVALSHA`` issued in
the same event-loop turn goes out in one pipeline (one connection, one write, one read).

Under load this spends redis-py's per-command overhead (connection checkout, retry wrapper,
socket write) once per batch instead of once per upload; with a single request in flight it
adds no more than one loop turn. Each call still gets its own result or exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis import exceptions as rex
from redis.asyncio import Redis

MAX_BATCH = 256
"""Most calls sent in one pipeline."""


class ScriptBatcher:
    """Runs one Lua script for many concurrent callers, pipelined.

    Args:
        redis: The asyncio client.
        script: The Lua source (loaded on first use, and again if Redis forgot it).
    """

    def __init__(self, redis: Redis, script: str) -> None:
        self.redis = redis
        self.script = script
        self._sha = redis.register_script(script).sha
        self._queue: list[tuple[Sequence[Any], asyncio.Future]] = []
        self._tasks: set[asyncio.Task] = set()

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """The script's result for these keys and args (Redis errors raised here)."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append(((self._sha, len(keys), *keys, *args), future))
        if len(self._queue) == 1:
            asyncio.get_running_loop().call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        """Send what queued up during this loop turn (in batches of at most MAX_BATCH)."""
        queued, self._queue = self._queue, []
        for start in range(0, len(queued), MAX_BATCH):
            task = asyncio.ensure_future(self._send(queued[start:start + MAX_BATCH]))
            self._tasks.add(task)  # keep a reference until it is done
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[Sequence[Any], asyncio.Future]]) -> None:
        """One pipeline for the batch; results (or errors) handed to each caller."""
        try:
            results = await self._pipeline(batch)
            again = [i for i, r in enumerate(results) if isinstance(r, rex.NoScriptError)]
            if again:  # first use, or Redis restarted without the script: load, resend those
                await self.redis.script_load(self.script)
                resent = await self._pipeline([batch[i] for i in again])
                for i, result in zip(again, resent, strict=True):
                    results[i] = result
        except Exception as exc:  # the connection failed: every caller gets the error
            results = [exc] * len(batch)
        for (_, future), result in zip(batch, results, strict=True):
            if future.done():  # the caller went away (cancelled)
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)

    async def _pipeline(self, batch: list[tuple[Sequence[Any], asyncio.Future]]) -> list[Any]:
        """Every call of the batch as one non-transactional pipeline."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for command, _ in batch:
                pipe.execute_command("EVALSHA", *command)
            return await pipe.execute(raise_on_error=False)
