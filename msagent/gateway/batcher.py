"""Running one Lua script for many concurrent requests: every call made in the same event-loop
turn goes to Redis as ONE ``EVALSHA`` (a group commit), whose KEYS and ARGV are the shared ones
followed by each caller's own, and whose reply holds ``width`` values per caller.

Under load this spends redis-py's per-command overhead (packing, connection checkout, retry
wrapper, socket write, reply parsing) and Redis's per-script overhead once per batch instead of
once per upload; with a single request in flight it adds no more than one loop turn. The
script must loop over the callers itself (see ``ADD_MANY`` in
:mod:`msagent.gateway.producer`). An error reply fails every caller of the batch; the script
is written so that a caller's retry is then safe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from redis import exceptions as rex
from redis.asyncio import Redis

MAX_BATCH = 256
"""Most callers served by one script call."""


class ScriptBatcher:
    """One Lua script call per batch of concurrent callers.

    Args:
        redis: The asyncio client.
        script: The Lua source (loaded on first use, and again if Redis forgot it).
        keys: KEYS every call starts with; each caller's key follows them.
        args: ARGV every call starts with; each caller's argument follows them.
        width: Values of the flat reply that belong to each caller, in caller order.
    """

    def __init__(self, redis: Redis, script: str, keys: Sequence[Any], args: Sequence[Any],
                 width: int) -> None:
        self.redis = redis
        self.script = script
        self._sha = redis.register_script(script).sha
        self._keys, self._args, self._width = tuple(keys), tuple(args), width
        self._queue: list[tuple[Any, Any, asyncio.Future]] = []
        self._tasks: set[asyncio.Task] = set()

    async def __call__(self, key: Any, arg: Any) -> list[Any]:
        """This caller's ``width`` values of the script's reply (Redis errors raised here)."""
        return await self.submit(key, arg)

    def submit(self, key: Any, arg: Any) -> asyncio.Future[list[Any]]:
        """Queue a call from synchronous code (in the event loop's thread): the future of its
        ``width`` values, or of the Redis error."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.append((key, arg, future))
        if len(self._queue) == 1:
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        """Send what queued up during this loop turn (in batches of at most MAX_BATCH)."""
        queued, self._queue = self._queue, []
        for start in range(0, len(queued), MAX_BATCH):
            task = asyncio.ensure_future(self._send(queued[start:start + MAX_BATCH]))
            self._tasks.add(task)  # keep a reference until it is done
            task.add_done_callback(self._tasks.discard)

    async def _send(self, batch: list[tuple[Any, Any, asyncio.Future]]) -> None:
        """One script call for the batch; each caller gets its values, or the error."""
        keys = (*self._keys, *(key for key, _, _ in batch))
        args = (*self._args, *(arg for _, arg, _ in batch))
        try:
            try:  # execute_command: redis-py's evalsha wrapper adds a layer per call
                reply = await self.redis.execute_command("EVALSHA", self._sha, len(keys), *keys,
                                                         *args)
            except rex.NoScriptError:  # first use, or Redis restarted without the script
                await self.redis.script_load(self.script)
                reply = await self.redis.execute_command("EVALSHA", self._sha, len(keys), *keys,
                                                         *args)
            if not isinstance(reply, list) or len(reply) != self._width * len(batch):
                raise rex.ResponseError(f"the script answered {reply!r:.200} for "
                                        f"{len(batch)} callers")
        except Exception as exc:  # every caller gets the error
            for _, _, future in batch:
                if not future.done():  # else the caller went away (cancelled)
                    future.set_exception(exc)
            return
        w = self._width
        for i, (_, _, future) in enumerate(batch):
            if not future.done():
                future.set_result(reply[i * w:(i + 1) * w])
