"""The backend this process has installed: one slot, filled by ``state.init`` or, inside a Ray
actor, by the Ray backend itself (``state`` imports the backends, so they cannot import it)."""

from __future__ import annotations

import threading

from msagent.runtime.backend import Backend

LOCK = threading.RLock()
"""Held while the slot is read and filled, so that two threads starting a backend start one."""

_backend: Backend | None = None


def get() -> Backend | None:
    """The installed backend, or None when none is."""
    return _backend


def put(backend: Backend | None) -> None:
    """Install ``backend`` (None: none), replacing the one installed."""
    global _backend
    with LOCK:
        _backend = backend
