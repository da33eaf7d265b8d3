"""Gathers concurrent calls of one batched method into a single invocation with lists."""

from __future__ import annotations

import inspect
import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from msagent.errors import BatchSizeError


class _Call:
    """One caller's arguments and, once served, its result or error."""

    __slots__ = ("arguments", "done", "result", "error")

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments
        self.done = threading.Event()
        self.result: Any = None
        self.error: BaseException | None = None


class Batcher:
    """Serves a batched method: callers block in ``submit`` while one thread runs batches.

    Hand-written rather than taken from Ray Serve's ``@serve.batch``: that one is asyncio-only
    and tied to Serve deployments, and this one must also serve the inline backend.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        label: str,
        batch: int,
        max_wait_ms: float,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self._fn = fn
        self._sig = inspect.signature(fn)
        self._label = label
        self._batch = batch
        self._max_wait_s = max_wait_ms / 1000.0
        self._lock = lock if lock is not None else nullcontext()
        self._queue: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self.batch_sizes: Counter[int] = Counter()
        threading.Thread(target=self._loop, name=f"batch:{label}", daemon=True).start()

    def submit(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Queue one call, wait until its batch ran, and return this caller's element."""
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self._label}: {exc}") from None
        bound.apply_defaults()
        call = _Call(dict(bound.arguments))
        self._queue.put(call)
        call.done.wait()
        if call.error is not None:
            raise call.error
        return call.result

    def _loop(self) -> None:
        """Forever: take a first call, gather more until full or the deadline, run them."""
        while True:
            calls = [self._queue.get()]
            deadline = time.monotonic() + self._max_wait_s
            while len(calls) < self._batch:
                remaining = deadline - time.monotonic()
                try:
                    calls.append(self._queue.get(timeout=max(remaining, 0.0)) if remaining > 0
                                 else self._queue.get_nowait())
                except queue.Empty:
                    break
            self._run(calls)

    def _run(self, calls: list[_Call]) -> None:
        """Invoke the method once with one list per parameter and hand out the results."""
        self.batch_sizes[len(calls)] += 1
        lists = {name: [c.arguments[name] for c in calls] for name in calls[0].arguments}
        try:
            with self._lock:
                results = self._fn(**lists)
            _check_length(self._label, results, len(calls))
        except BaseException as exc:  # every caller of the batch receives the error
            for call in calls:
                call.error = exc
                call.done.set()
            return
        for call, result in zip(calls, results):
            call.result = result
            call.done.set()


def _check_length(label: str, results: Any, expected: int) -> None:
    """Raise BatchSizeError unless a batched method returned one result per call."""
    if not isinstance(results, (list, tuple)):
        raise BatchSizeError(
            f"batched method {label} must return a list with one result per call, "
            f"got {type(results).__name__}"
        )
    if len(results) != expected:
        raise BatchSizeError(
            f"batched method {label} returned {len(results)} results for a batch of "
            f"{expected} calls"
        )
