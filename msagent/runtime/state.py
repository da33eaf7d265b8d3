"""Which backend this process uses: chosen by ``msagent.init`` or, by default, embedded Ray."""

from __future__ import annotations

from typing import Literal

from msagent.errors import ConfigError
from msagent.runtime import slot
from msagent.runtime.backend import Backend

BackendName = Literal["inline", "ray"]


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
    with slot.LOCK:
        started = slot.get()
        if started is not None:
            if started.name != backend:
                raise ConfigError(f"msagent is already initialized with backend "
                                  f"{started.name!r}; call msagent.shutdown() first")
            return started
        if backend == "inline":
            from msagent.runtime.inline import InlineBackend

            started = InlineBackend(torch_threads=torch_threads)
        elif backend == "ray":
            from msagent.runtime.ray_backend import RayBackend

            started = RayBackend(address, namespace, torch_threads, num_cpus, log_file)
        else:
            raise ConfigError(f"unknown backend {backend!r}; choose 'inline' or 'ray'")
        slot.put(started)
        return started


def current() -> Backend:
    """The backend in use, starting the default (embedded Ray) on first use."""
    with slot.LOCK:
        found = slot.get()
        return found if found is not None else init()


def installed() -> Backend | None:
    """The backend in use, or None when none was chosen yet (never starts one)."""
    with slot.LOCK:
        return slot.get()


def attach(backend: Backend) -> None:
    """Install an already-running backend (tests share one between runs; a Ray actor installs
    its own through ``slot``)."""
    slot.put(backend)


def shutdown() -> None:
    """Stop every service this process started and forget the backend (and its routes)."""
    with slot.LOCK:
        backend = slot.get()
        if backend is not None:
            backend.shutdown()
            backend.routes.clear()
        slot.put(None)
