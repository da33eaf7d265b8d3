"""Freed request buffers go back to the system: glibc's ``mallopt`` with fixed thresholds.

glibc serves an allocation of 128 KiB or more with ``mmap`` (returned to the system when
freed), but raises that threshold to the size of every such block freed, up to 32 MiB: after
a few large bodies, every later body of that size comes from the heap, whose freed pages stay
with the process. A gateway that read many large or hostile bodies then held them as memory
it no longer used (its RSS grew 8 % in ``benchmarks/hostile.py`` with 2 workers; 3 % with the
thresholds fixed). Hand-written because Python exposes no ``mallopt``; a no-op where the C
library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
"""glibc's ``mallopt`` parameters (malloc.h)."""

THRESHOLD_BYTES = 128 * 1024
"""Blocks from this size up are mapped (and unmapped when freed); free heap above it is
returned at once."""


def return_freed_memory() -> bool:
    """Fix glibc's mmap and trim thresholds for this process; whether it could."""
    name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError, TypeError):  # not glibc
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, THRESHOLD_BYTES)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, THRESHOLD_BYTES))
