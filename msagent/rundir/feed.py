"""A run's live feed for the dashboard: its newest state as one JSON file, and a timeline.

Layout inside the run directory::

    feed/state.json       the newest state (atomic rewrite): progress, services, league, PSRO
    feed/timeline.jsonl   one JSON line per interval: progress, ratings, evaluation win rates

Plain JSON only, so that a reader (``msagent dashboard``) never unpickles or executes anything
a run directory holds. ``format`` tells readers which layout wrote a file.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msagent.rundir.atomic import atomic_write
from msagent.version import __version__

FEED_DIR = "feed"
STATE_FILE = "state.json"
TIMELINE_FILE = "timeline.jsonl"
FEED_FORMAT = 1
"""Bumped when a field changes meaning; readers show what they understand of other formats."""


def plain(value: Any) -> Any:
    """``value`` with NaN and infinities as None, so that the JSON is strict (browsers reject NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class RunFeed:
    """Writes ``feed/state.json`` and appends to ``feed/timeline.jsonl`` of one run directory.

    Args:
        run_path: The run directory.
        clock: Wall-clock seconds (tests pass their own).
    """

    def __init__(self, run_path: Path, clock: Callable[[], float] = time.time) -> None:
        self.folder = Path(run_path) / FEED_DIR
        self.folder.mkdir(exist_ok=True)
        self.clock = clock

    @property
    def state_path(self) -> Path:
        """The newest state's file."""
        return self.folder / STATE_FILE

    @property
    def timeline_path(self) -> Path:
        """The timeline's file."""
        return self.folder / TIMELINE_FILE

    def write_state(self, state: dict[str, Any]) -> None:
        """Replace the state file atomically (a reader sees the old or the new one, whole)."""
        doc = {"format": FEED_FORMAT, "msagent": __version__, "written_s": self.clock(),
               **plain(state)}
        atomic_write(self.state_path, json.dumps(doc, separators=(",", ":")).encode())

    def append(self, point: dict[str, Any]) -> None:
        """Append one timeline point (one line, written with a single call)."""
        line = json.dumps({"t": self.clock(), **plain(point)}, separators=(",", ":")) + "\n"
        with open(self.timeline_path, "a", encoding="utf-8") as f:
            f.write(line)
