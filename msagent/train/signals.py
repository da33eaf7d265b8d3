"""SIGINT and SIGTERM during training: the first asks for a clean stop (services stopped, a
final checkpoint, the result printed); a second one interrupts at once."""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}
"""The exit code of ``msagent train`` after a clean stop on each signal (128 + number)."""


class StopSignals:
    """Context manager: while active, ``received`` names the first stop signal (or None)."""

    def __init__(self) -> None:
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

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
        """First signal: remember it; the second: interrupt now."""
        if self.received is not None:
            raise KeyboardInterrupt
        self.received = signal.Signals(signum).name
