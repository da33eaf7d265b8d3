"""What every service with a playing loop shares (env workers, the evaluator): ``run`` until
``stop``, a crash kept as plain data for the driver, and a clean stop that waits."""

from __future__ import annotations

import threading

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
