"""Send Python logging to the run's log file: the driver for the duration of a run, and each
service process (Ray mode) for its lifetime, all into the same ``train.log``."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s pid=%(process)d %(name)s: %(message)s"
_attached: set[str] = set()


def _file_handler(path: Path, level: int) -> logging.Handler:
    """An appending file handler with msagent's format."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.setLevel(level)
    return handler


@contextmanager
def log_to_file(path: Path, level: int = logging.INFO) -> Iterator[logging.Handler]:
    """Attach a file handler to the root logger while the block runs, then remove it."""
    handler = _file_handler(Path(path), level)
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


def append_to_log(path: str | Path, level: int = logging.INFO) -> None:
    """In a service process: append this process's log records to ``path`` from now on.

    Small records appended with O_APPEND from several processes do not interleave mid-line.
    """
    key = str(Path(path).absolute())
    if key in _attached:
        return
    _attached.add(key)
    root = logging.getLogger()
    root.addHandler(_file_handler(Path(key), level))
    if root.level == logging.NOTSET or root.level > level:
        root.setLevel(level)
