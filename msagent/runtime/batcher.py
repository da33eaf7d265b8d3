"""Gathers concurrent calls of one batched method into a single invocation with lists."""

from __future__ import annotations

import inspect
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from msagent.errors import BatchSizeError

Outcome = tuple[bool, Any]
"""A served call: (True, result) or (False, the exception it raised)."""


class _Call:
    """One caller's arguments and, once served, its result or error.

    ``wake`` is set when the call was served, or when it was promoted to lead the next batch.
    """

    __slots__ = ("arguments", "wake", "served", "result", "error")

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments
        self.wake = threading.Event()
        self.served = False
        self.result: Any = None
        self.error: BaseException | None = None


class Batcher:
    """Serves a batched method: concurrent callers are gathered into one invocation.

    Leader/follower: the first caller of a batch gathers the others (until the batch is full
    or ``max_wait_ms`` passed) and runs the batch in its own thread; the others wait for their
    element. No hand-over to a batching thread, so a call costs no extra thread switches.
    Calls that arrive while a batch runs join the next one (so batches form under load even
    with ``max_wait_ms=0``); calls beyond a full batch wait for the next one, led by the
    oldest of them.

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
        self._arrived = threading.Condition()
        self._waiting: list[_Call] = []
        self._leading = False
        self.batch_sizes: Counter[int] = Counter()

    def submit(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Join (or lead) a batch, wait until it ran, and return this caller's element."""
        call = _Call(self._bind(args, kwargs))
        with self._arrived:
            self._waiting.append(call)
            lead, self._leading = not self._leading, True
            self._arrived.notify()
        while not call.served:
            if lead:
                self._lead()
            call.wake.wait()
            call.wake.clear()
            lead = True  # woken but not served: promoted to lead the next batch
        if call.error is not None:
            raise call.error
        return call.result

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name (defaults applied)."""
        try:
            bound = self._sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self._label}: {exc}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def _lead(self) -> None:
        """Gather until full or the deadline, wait for the method to be free, then take the
        calls (those that arrived meanwhile too), hand the lead on, and run the batch."""
        deadline = time.monotonic() + self._max_wait_s
        with self._arrived:
            while len(self._waiting) < self._batch:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._arrived.wait(remaining):
                    break
        with self._lock:  # calls arriving while a batch runs join the next one
            with self._arrived:
                calls, self._waiting = self._waiting[:self._batch], self._waiting[self._batch:]
                self.batch_sizes[len(calls)] += 1
                if self._waiting:
                    self._waiting[0].wake.set()  # the oldest waiting call leads the next batch
                else:
                    self._leading = False
            self._run(calls)

    def run_now(self, calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[Outcome]:
        """Serve calls that a single caller gathered itself (a channel's serving loop): in
        batches of at most ``batch``, under the same lock as ``submit``'s; one outcome each."""
        outcomes: list[Outcome | None] = [None] * len(calls)
        bound: list[tuple[int, _Call]] = []
        for i, (args, kwargs) in enumerate(calls):
            try:
                bound.append((i, _Call(self._bind(args, kwargs))))
            except TypeError as exc:  # this call's arguments do not fit; the others run
                outcomes[i] = (False, exc)
        for start in range(0, len(bound), self._batch):
            chunk = bound[start:start + self._batch]
            with self._lock:
                with self._arrived:
                    self.batch_sizes[len(chunk)] += 1
                self._run([call for _, call in chunk])
            for i, call in chunk:
                outcomes[i] = (False, call.error) if call.error is not None else (True, call.result)
        return outcomes  # type: ignore[return-value]

    def _run(self, calls: list[_Call]) -> None:
        """Invoke the method once with one list per parameter and hand out the results."""
        lists = {name: [c.arguments[name] for c in calls] for name in calls[0].arguments}
        try:
            results = self._fn(**lists)
            _check_length(self._label, results, len(calls))
        except BaseException as exc:  # every caller of the batch receives the error
            results = [None] * len(calls)
            for call in calls:
                call.error = exc
        for call, result in zip(calls, results):
            call.result, call.served = result, True
            call.wake.set()


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
