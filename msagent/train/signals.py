"""Asking a training run to stop cleanly (services stopped, a final checkpoint, the result
printed): SIGINT or SIGTERM to the driver (a second one, a second or more later, interrupts
at once), or a ``STOP`` file in the run directory (``msagent stop RUN_DIR``), which works where
no signal reaches the driver, such as a Ray job or another user's terminal."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

log = logging.getLogger(__name__)

STOP_FILE_REASON = "stop requested (STOP file)"

EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}
"""The exit code of ``msagent train`` after a clean stop on each signal (128 + number)."""

REPEAT_WINDOW_S = 1.0
"""A second stop signal this soon after the first is the same request delivered twice, not
a second Ctrl-C: GNU ``timeout`` signals both its command and the command's process group."""


class StopSignals:
    """Context manager: while active, ``received`` names the first stop signal (or None).

    Args:
        clock: Monotonic seconds (injectable for tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.received: str | None = None
        self._previous: dict[int, Any] = {}
        self._clock = clock
        self._first_at = 0.0

    def __enter__(self) -> StopSignals:
        """Install the handlers (only the main thread can; elsewhere this is a no-op)."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Put the previous handlers back."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        """First signal: remember it; a later one (past the repeat window): interrupt now."""
        if self.received is None:
            self.received, self._first_at = signal.Signals(signum).name, self._clock()
        elif self._clock() - self._first_at >= REPEAT_WINDOW_S:
            raise KeyboardInterrupt


class StopFile:
    """The run directory's ``STOP`` file: one left from before the run starts is removed (a
    resumed run must not stop at once); one that appears later asks for a clean stop.

    Args:
        path: The file (``RunDir.stop_path``), or None for a run without a directory.
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None and path.exists():
            log.warning("removing %s, left by an earlier stop", path)
            path.unlink(missing_ok=True)

    def requested(self) -> bool:
        """Whether the file is there now (it is removed once seen, so a resume starts clean)."""
        if self.path is None or not self.path.exists():
            return False
        log.warning("%s found: stopping cleanly", self.path)
        self.path.unlink(missing_ok=True)
        return True
