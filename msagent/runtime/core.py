"""Dispatch of calls on one service instance: locking, batching, fire-and-forget logging.

Both backends wrap every instance in an ``InstanceCore``; only how calls arrive differs.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from typing import Any

from msagent.errors import MethodNotRegisteredError
from msagent.runtime.batcher import Batcher, Outcome
from msagent.runtime.spec import RegisterSpec, registered_methods

log = logging.getLogger("msagent.service")


class InstanceCore:
    """Serves the registered methods of one user object.

    Non-batched, non-concurrent methods run under one lock, so user code sees one call at a
    time (as in a plain actor). Batched methods gather concurrent callers through a Batcher.
    """

    def __init__(self, obj: Any, service: str, instance_id: str) -> None:
        self.obj = obj
        self.service = service
        self.instance_id = instance_id
        self.specs: dict[str, RegisterSpec] = registered_methods(type(obj))
        self._lock = threading.RLock()
        self._bound = {name: getattr(obj, name) for name in self.specs}
        self._batchers = {
            name: Batcher(self._bound[name], f"{service}.{name}", spec.batch, spec.max_wait_ms,
                          None if spec.concurrent else self._lock)
            for name, spec in self.specs.items() if spec.batch > 1
        }
        self.calls: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.inflight = 0
        self._count_lock = threading.Lock()

    def invoke(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run one call of a registered method and return its result (raising its error)."""
        spec = self.spec(name)
        with self._count_lock:
            self.calls[name] += 1
            self.inflight += 1
        try:
            return self._dispatch(name, spec, args, kwargs)
        finally:
            with self._count_lock:
                self.inflight -= 1

    def invoke_many(self, name: str,
                    calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[Outcome]:
        """Serve calls of one method gathered by a single serving thread: a batched method's
        calls run as batches directly (no leader hand-offs), others one by one."""
        self.spec(name)  # an unknown method fails every call with the same clear error
        batcher = self._batchers.get(name)
        if batcher is None:
            return [self._outcome(name, args, kwargs) for args, kwargs in calls]
        with self._count_lock:
            self.calls[name] += len(calls)
            self.inflight += len(calls)
        try:
            return batcher.run_now(calls)
        finally:
            with self._count_lock:
                self.inflight -= len(calls)

    def _outcome(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        """One call's result or error, as an outcome."""
        try:
            return True, self.invoke(name, args, kwargs)
        except BaseException as exc:  # the caller re-raises it, as with a Ray call
            return False, exc

    def _dispatch(self, name: str, spec: RegisterSpec, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
        """Route one call to its batcher, or run it (under the lock unless concurrent)."""
        batcher = self._batchers.get(name)
        if batcher is not None:
            return batcher.submit(args, kwargs)
        if spec.concurrent:
            return self._bound[name](*args, **kwargs)
        with self._lock:
            return self._bound[name](*args, **kwargs)

    def invoke_logged(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Run a fire-and-forget call: nobody waits for it, so its error is logged here."""
        try:
            self.invoke(name, args, kwargs)
        except Exception:
            self.errors[name] += 1
            log.exception("fire-and-forget call %s.%s failed on instance %s",
                          self.service, name, self.instance_id)

    def spec(self, name: str) -> RegisterSpec:
        """The spec of a registered method, or a clear error naming service and method."""
        try:
            return self.specs[name]
        except KeyError:
            raise MethodNotRegisteredError(
                f"service {self.service!r} has no registered method {name!r} "
                f"(registered: {', '.join(sorted(self.specs)) or 'none'})"
            ) from None

    def stats(self) -> dict[str, Any]:
        """Calls, errors and observed batch sizes per method, for tests and benchmarks."""
        return {
            "instance": self.instance_id,
            "pid": os.getpid(),
            "calls": dict(self.calls),
            "errors": dict(self.errors),
            "batch_sizes": {n: dict(b.batch_sizes) for n, b in self._batchers.items()},
        }
