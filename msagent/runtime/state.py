"""Which backend this process uses: chosen by ``msagent.init`` or, by default, embedded Ray."""

from __future__ import annotations

import sys
import threading
from typing import Literal

from msagent.errors import ConfigError
from msagent.runtime.backend import Backend

BackendName = Literal["inline", "ray"]

_lock = threading.RLock()
_backend: Backend | None = None


def init(
    backend: BackendName = "ray",
    address: str | None = None,
    namespace: str = "msagent",
    torch_threads: int = 1,
    num_cpus: int | None = None,
    log_file: str | None = None,
) -> Backend:
    """Choose the backend for this process (``inline`` or ``ray``) and start it.

    Args:
        backend: ``inline`` runs every service in this process; ``ray`` runs each instance as a
            Ray actor.
        address: A Ray cluster to join; None starts an embedded Ray bound to 127.0.0.1.
        namespace: Ray namespace in which services register (callers must share it).
        torch_threads: torch intra-op threads per service process.
        num_cpus: CPUs the embedded Ray advertises (None: all).
        log_file: Ray only: service processes append their log records to this file (the
            run's ``train.log``); in this process the caller sets up logging.
    """
    global _backend
    with _lock:
        if _backend is not None:
            if _backend.name != backend:
                raise ConfigError(f"msagent is already initialized with backend "
                                  f"{_backend.name!r}; call msagent.shutdown() first")
            return _backend
        if backend == "inline":
            from msagent.runtime.inline import InlineBackend

            _backend = InlineBackend(torch_threads=torch_threads)
        elif backend == "ray":
            from msagent.runtime.ray_backend import RayBackend

            _backend = RayBackend(address, namespace, torch_threads, num_cpus, log_file)
        else:
            raise ConfigError(f"unknown backend {backend!r}; choose 'inline' or 'ray'")
        return _backend


def current() -> Backend:
    """The backend in use, starting the default (embedded Ray) on first use."""
    with _lock:
        return _backend if _backend is not None else init()


def installed() -> Backend | None:
    """The backend in use, or None when none was chosen yet (never starts one)."""
    with _lock:
        return _backend


def attach(backend: Backend) -> None:
    """Install an already-running backend (used inside Ray actors)."""
    global _backend
    with _lock:
        _backend = backend


def shutdown() -> None:
    """Stop every service this process started and forget the backend."""
    global _backend
    with _lock:
        if _backend is not None:
            _backend.shutdown()
        _backend = None
    from msagent.runtime import solver

    solver.forget_routes()


def pin_torch_threads(n: int) -> None:
    """Give torch ``n`` intra-op threads if torch is loaded (2 threads ran 2-3x slower here)."""
    torch = sys.modules.get("torch")
    if torch is not None and n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)
