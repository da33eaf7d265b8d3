"""Shared fixtures: one embedded Ray per test session, swapped in and out per test."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # tests stay on 127.0.0.1

from msagent.runtime import solver, state  # noqa: E402
from tests.redis_server import redis_url  # noqa: E402,F401  (a fixture for every package)

_ray_backend = None


def ray_backend():
    """The session's Ray backend, (re)started on demand."""
    global _ray_backend
    if _ray_backend is None:
        from msagent.runtime.ray_backend import RayBackend

        _ray_backend = RayBackend(num_cpus=2)
    return _ray_backend


def forget_ray_backend() -> None:
    """Shut the session's Ray down (for tests that need their own cluster)."""
    global _ray_backend
    if _ray_backend is not None:
        _ray_backend.shutdown()
    _ray_backend = None


@pytest.fixture(params=["inline", "ray"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test on each backend; services launched in it are stopped afterwards."""
    yield from _use(request.param)


@pytest.fixture
def ray_only() -> Iterator[str]:
    """Run the test on the Ray backend only."""
    yield from _use("ray")


@pytest.fixture
def inline_only() -> Iterator[str]:
    """Run the test on the inline backend only."""
    yield from _use("inline")


def _use(name: str) -> Iterator[str]:
    """Install a backend for one test and clean up its services after it."""
    if name == "ray":
        be = ray_backend()
    else:
        from msagent.runtime.inline import InlineBackend

        be = InlineBackend()
    state.attach(be)
    solver.forget_routes()
    try:
        yield name
    finally:
        if name == "ray":
            be.stop_services()
            be.forget_topics()  # the next test's run must not adopt this one's parameters
        else:
            be.shutdown()
        state.attach(None)  # type: ignore[arg-type]
        solver.forget_routes()


@pytest.fixture(autouse=True)
def _shared_ray(request: pytest.FixtureRequest) -> Iterator[None]:
    """Slow tests share the worker's Ray: a run in Ray mode joins it (as a run does a Ray it
    did not start) instead of paying ~8 s to start and stop its own; its topics are dropped
    afterwards so that the next run cannot adopt them."""
    global _ray_backend
    runs = request.node.path.parent.name in SHARED_RAY_FOLDERS
    if not runs or request.node.get_closest_marker("slow") is None or \
            request.node.get_closest_marker("own_ray") is not None:
        yield
        return
    if _ray_backend is not None and not _ray_backend._ray.is_initialized():
        _ray_backend = None  # a test stopped Ray itself: start it again
    ray_backend()
    yield
    if _ray_backend is not None and _ray_backend._ray.is_initialized() and \
            state.installed() is None:
        _ray_backend.forget_topics()


SHARED_RAY_FOLDERS = {"train", "envs", "platform", "exporting", "policy", "league", "psro"}
"""Test folders whose slow tests run whole trainings (not the runtime's own Ray tests)."""


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the session's Ray."""
    forget_ray_backend()
