"""What every service with a playing loop shares (env workers, the evaluator): ``run`` until
``stop``, a crash kept as plain data for the driver, and a clean stop that waits; and the
Protocols of the calls the driver makes on a handle whose class varies (``Drainable.drain``)."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from msagent.errors import ErrorInfo
from msagent.runtime import register


class Looping:
    """Base of loop services: subclasses write ``_loop`` and poll ``self._stop``."""

    def __init__(self) -> None:
        self._stop, self._done = threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self.error: ErrorInfo | None = None

    @register(response=False)
    def run(self) -> None:
        """Loop until stopped (a crash is kept in ``error`` for the driver's ``drain``)."""
        try:
            self._loop()
        except Exception as exc:
            if not self._stop.is_set():  # an error while stopping is the shutdown's
                self.error = ErrorInfo.of(exc)
                raise
        finally:
            self._done.set()

    @register(concurrent=True)
    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop ``run`` after its current round; True once it has ended."""
        self._stop.set()
        return self._done.wait(timeout_s)

    def _loop(self) -> None:
        """The service's loop."""
        raise NotImplementedError


class Drainable(Protocol):
    """The call the driver polls on a service of several classes: feeders (env workers, store
    readers) and evaluators (``Evaluator``, ``MetaEvaluator``)."""

    def drain(self) -> dict[str, Any]:
        """What happened since the last drain, and the loop's error (None while it runs)."""
        ...


class Stoppable(Protocol):
    """The call that ends a service's loop, shared by loop services and the learner (which
    answers with its statistics), so that one list of handles can be stopped after a failure."""

    def stop(self, timeout_s: float = 30.0) -> Any:
        """End the loop; wait up to ``timeout_s`` for it."""
        ...
