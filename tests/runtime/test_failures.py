"""Instances that die, scale up and down, and bad input: on real Ray processes."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from msagent import Solver, launch
from msagent.errors import InstanceDiedError, SerializationError

from tests.runtime.helpers import Worker


def _kill_one(handle) -> int:
    """SIGKILL the process of the first instance; return its pid."""
    pid = handle.placements()[0]["pid"]
    os.kill(pid, signal.SIGKILL)
    return pid


@pytest.mark.slow
def test_killed_instance_fails_its_calls_in_flight_then_traffic_moves_on(ray_only: str) -> None:
    handle = launch(Worker, num=2)
    victim = handle.placements()[0]["pid"]
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(Solver().retrieve, handle, "sleep", 1.0) for _ in range(8)]
        time.sleep(0.4)
        os.kill(victim, signal.SIGKILL)
        outcomes = [f.exception(timeout=60) or f.result() for f in futures]
    died = [o for o in outcomes if isinstance(o, InstanceDiedError)]
    assert died, outcomes  # calls that were running on the killed process fail clearly
    assert all("died while running 'sleep'" in str(e) for e in died)
    assert all(isinstance(o, (int, InstanceDiedError)) for o in outcomes), outcomes
    later = [Solver().retrieve(handle, "sleep", 0.0) for _ in range(10)]
    assert victim not in later and len(set(later)) == 1


@pytest.mark.slow
def test_idempotent_call_in_flight_is_retried_on_another_instance(ray_only: str) -> None:
    handle = launch(Worker, num=2)
    pids = {p["pid"] for p in handle.placements()}
    with ThreadPoolExecutor(6) as pool:
        futures = [pool.submit(Solver().retrieve, handle, "sleep_idempotent", 1.0)
                   for _ in range(6)]
        time.sleep(0.4)
        victim = _kill_one(handle)
        results = [f.result(timeout=60) for f in futures]
    assert all(r in pids - {victim} for r in results), (results, victim)


def test_scale_up_new_instance_receives_traffic(ray_only: str) -> None:
    handle = launch(Worker, num=1)
    first = {p["pid"] for p in handle.placements()}
    Solver().retrieve(handle, "pid")
    handle.scale(3)
    assert handle.num_instances == 3
    time.sleep(0.6)  # callers refresh their view of the registry every 0.5 s
    with ThreadPoolExecutor(6) as pool:
        seen = set(pool.map(lambda _: Solver().retrieve(handle, "sleep", 0.05), range(24)))
    assert len(seen - first) >= 1 and len(seen) >= 2


def test_scale_down_keeps_serving_without_errors(ray_only: str) -> None:
    handle = launch(Worker, num=3)
    errors: list[BaseException] = []
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            try:
                Solver().retrieve(handle, "func", 1)
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)

    threads = [threading.Thread(target=hammer) for _ in range(3)]
    for t in threads:
        t.start()
    handle.scale(1)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert handle.num_instances == 1


def test_unpicklable_argument_is_a_clear_error_and_service_keeps_serving(ray_only: str) -> None:
    launch(Worker)
    with pytest.raises(SerializationError, match="Worker#0.func"):
        Solver().retrieve(Worker, "func", threading.Lock())
    assert Solver().retrieve(Worker, "func", 1)["args"] == [1]


def test_constructor_error_is_reported_at_launch(ray_only: str) -> None:
    with pytest.raises(Exception, match="failed to start"):
        launch(Worker, kwargs={"no_such_argument": 1})


@pytest.mark.slow
def test_a_call_to_every_instance_names_the_service_of_one_that_died(ray_only: str) -> None:
    """call_all raises the runtime's InstanceGone, not Ray's error: the driver turns it into
    "service X died" (a learner killed during a checkpoint surfaced as a bare ActorDiedError)."""
    from msagent.runtime.backend import InstanceGone

    handle = launch(Worker, num=1)
    os.kill(handle.placements()[0]["pid"], signal.SIGKILL)
    with pytest.raises(InstanceGone, match="an instance of service Worker died during sleep"):
        handle.call_all("sleep", 0.0)


@pytest.mark.slow
def test_a_stale_death_report_does_not_remove_the_new_instance_under_the_same_id(
        ray_only: str) -> None:
    """A caller that still routes to a service's instance from before (the previous run on
    the same Ray) finds it dead and reports it: the new ``Worker#0`` must stay routable."""
    from msagent.runtime import state

    old = launch(Worker, num=1)
    Solver().retrieve(old, "sleep", 0.0)  # this process now routes to the old Worker#0
    router = state.installed().routes.get("Worker", lambda name: None)
    stale = router._routes[0]
    old.shutdown()
    new = launch(Worker, num=1)
    assert new.instance_ids() == ["Worker#0"] == [stale.instance_id]
    router._routes, router._next_refresh = [stale], time.monotonic() + 60  # a view from before
    with pytest.raises(InstanceDiedError):
        Solver().retrieve(new, "sleep", 0.0)  # the old actor: dead, and reported dead
    time.sleep(1.0)  # the registry has handled the report
    router._next_refresh = 0.0
    pid = new.placements()[0]["pid"]
    assert [Solver().retrieve(new, "sleep", 0.0) for _ in range(3)] == [pid] * 3
    new.shutdown()
