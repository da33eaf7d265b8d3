"""Crash-safe file writes: a reader sees the old file or the whole new one, never a part."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"
"""Suffix of the temporary files :func:`atomic_write` leaves behind if the process dies."""


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync, rename.

    Args:
        path: Destination; its folder must exist.
        data: The complete new contents.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Persist a folder's entries (a rename survives power loss); a no-op where unsupported."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_temp_files(folder: Path) -> int:
    """Delete temp files a crashed writer left in ``folder``; return how many went."""
    removed = 0
    for leftover in folder.glob(f".*{TEMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            leftover.unlink()
            removed += 1
    return removed
