"""Send Python logging to the run's log file for the duration of a run."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(processName)s %(name)s: %(message)s"


@contextmanager
def log_to_file(path: Path, level: int = logging.INFO) -> Iterator[logging.Handler]:
    """Attach a file handler to the root logger while the block runs, then remove it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level)
    root = logging.getLogger()
    previous = root.level
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(previous)
        handler.close()
