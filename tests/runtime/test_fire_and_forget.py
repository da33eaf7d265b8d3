"""response=False: the caller gets control back at once; the call still happens."""

from __future__ import annotations

import time

from msagent import Solver, launch

from tests.runtime.helpers import Worker


def test_fire_and_forget_returns_before_the_method_finishes(backend: str) -> None:
    launch(Worker)
    Solver().retrieve(Worker, "func")  # warm up routes
    start = time.perf_counter()
    assert Solver().retrieve(Worker, "slow_add", "x", 0.5) is None
    assert time.perf_counter() - start < 0.2
    deadline = time.monotonic() + 10
    while Solver().retrieve(Worker, "added_values") != ["x"]:
        assert time.monotonic() < deadline, "the fire-and-forget call never ran"
        time.sleep(0.05)


def test_fire_and_forget_on_a_local_object_also_returns_at_once() -> None:
    worker = Worker()
    start = time.perf_counter()
    assert Solver().retrieve(worker, "slow_add", 1, 0.3) is None
    assert time.perf_counter() - start < 0.2
    time.sleep(0.6)
    assert worker.added == [1]
