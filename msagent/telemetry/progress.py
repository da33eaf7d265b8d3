"""Terminal progress: a live table on a TTY, one plain line per interval elsewhere (CI, pipes)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from msagent.telemetry.formatting import line, rows

log = logging.getLogger("msagent.train")

REFRESH_PER_S = 4


class ProgressDisplay:
    """Shows training progress while used as a context manager; a no-op when disabled.

    Args:
        enabled: False: show nothing.
        log_every_s: Seconds between plain lines (when the output is not a terminal).
        stream: Where to write (default: stdout).
        force_terminal: Override TTY detection (None: detect).
        clock: Monotonic time source (injectable for tests).
    """

    def __init__(
        self, enabled: bool = True, log_every_s: float = 1.0, stream: IO[str] | None = None,
        force_terminal: bool | None = None, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled, self.log_every_s, self._clock = enabled, log_every_s, clock
        self._console = Console(file=stream, force_terminal=force_terminal)
        self._live: Live | None = None
        self._latest: dict[str, Any] | None = None
        self._printed: dict[str, Any] | None = None
        self._last_print = float("-inf")

    @property
    def live(self) -> bool:
        """True when showing the live table (a terminal), False for plain lines or disabled."""
        return self.enabled and self._console.is_terminal

    def __enter__(self) -> ProgressDisplay:
        """Start the live table if the output is a terminal."""
        if self.live:
            self._live = Live(_table(None), console=self._console,
                              refresh_per_second=REFRESH_PER_S)
            self._live.start()
        return self

    def update(self, snapshot: dict[str, Any]) -> None:
        """Show a new metrics snapshot (redrawn ~4/s live, or printed every ``log_every_s``)."""
        if not self.enabled:
            return
        self._latest = snapshot
        if self._live is not None:
            self._redraw(snapshot)
        elif self._clock() - self._last_print >= self.log_every_s:
            self._print_line(snapshot)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the live table, or print the last snapshot if it was not printed yet."""
        if self._live is not None:
            if self._latest is not None:
                self._live.update(_table(self._latest))
            self._live.stop()
            self._live = None
        elif self.enabled and self._latest is not None and self._latest is not self._printed:
            self._print_line(self._latest)

    def _redraw(self, snapshot: dict[str, Any]) -> None:
        """Rebuild the live table, at most at the refresh rate (updates may come faster)."""
        now = self._clock()
        if now - self._last_print >= 1.0 / REFRESH_PER_S:
            self._live.update(_table(snapshot))  # type: ignore[union-attr]
            self._last_print = now

    def _print_line(self, snapshot: dict[str, Any]) -> None:
        """Write one plain progress line and flush it (pipes buffer otherwise); a closed output
        (the reading end of a pipe gone, a closed terminal) turns the display off, never the
        run: training goes on and ``train.log`` keeps its record."""
        file = self._console.file
        self._printed, self._last_print = snapshot, self._clock()
        try:
            file.write(line(snapshot) + "\n")
            file.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:  # ValueError: a closed file
            self.enabled = False
            log.warning("progress output closed (%r); training goes on without it", exc)


def _table(snapshot: dict[str, Any] | None) -> Table:
    """The live table for a snapshot (an empty one before the first)."""
    table = Table(title="msagent train", show_header=False, min_width=40)
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    for label, value in rows(snapshot) if snapshot is not None else [("status", "starting")]:
        table.add_row(label, value)
    return table
