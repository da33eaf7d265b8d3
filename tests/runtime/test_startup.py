"""Parallel launches, background route refreshes and topic followers."""

from __future__ import annotations

import threading
import time

import pytest

from msagent import Solver, launch, publish
from msagent.runtime import follow, state
from msagent.runtime.backend import Route, ServiceView
from msagent.runtime.batcher import Batcher
from msagent.runtime.router import REFRESH_S, Router

from tests.runtime.direct_helpers import DiesWhileStarting, SlowStart


@pytest.mark.slow
def test_services_launched_without_waiting_start_in_parallel(backend: str) -> None:
    handles = [launch(SlowStart, name=f"Slow{i}", args=(3.0,), wait=False) for i in range(3)]
    for handle in handles:
        handle.wait_ready()
    assert [Solver().retrieve(h, "ping") for h in handles] == ["pong"] * 3
    windows = [Solver().retrieve(h, "built_during") for h in handles]
    if backend == "ray":  # the constructors ran at the same time (inline: one after another)
        assert max(start for start, _ in windows) < min(end for _, end in windows), windows


def test_a_failed_constructor_is_raised_by_wait_ready_and_nothing_is_routed(ray_only: str) -> None:
    handle = launch(SlowStart, kwargs={"fail": True}, wait=False)
    with pytest.raises(Exception, match="failed to start"):
        handle.wait_ready()
    assert handle.num_instances == 0
    assert "SlowStart" not in state.current().services()


def test_an_instance_whose_process_dies_while_starting_is_started_again_once(
        ray_only: str, tmp_path) -> None:
    marker = tmp_path / "deaths"
    marker.write_text("1")
    handle = launch(DiesWhileStarting, args=(str(marker),))
    assert marker.read_text() == "0" and handle.num_instances == 1
    assert Solver().retrieve(handle, "ping") == "pong"


def test_a_process_that_dies_twice_while_starting_fails_the_launch(
        ray_only: str, tmp_path) -> None:
    marker = tmp_path / "deaths"
    marker.write_text("5")
    with pytest.raises(Exception, match="failed to start.*ActorDiedError"):
        launch(DiesWhileStarting, args=(str(marker),))
    assert marker.read_text() == "3"  # the first try and one retry, no more
    assert "DiesWhileStarting" not in state.current().services()


class _SlowRegistry:
    """A backend stub whose registry answers after ``delay_s``; counts lookups."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s, self.lookups, self.epoch = delay_s, 0, 0

    def lookup(self, service: str, known_epoch: int) -> ServiceView | None:
        time.sleep(self.delay_s if self.lookups else 0.0)
        self.lookups += 1
        self.epoch += 1
        return ServiceView(self.epoch, {}, [(f"{service}#0", object())])


def test_resources_the_embedded_ray_lacks_are_refused_instead_of_waited_for(
        ray_only: str) -> None:
    """An actor asking for a GPU on a machine without one (or a cluster's custom resource)
    would wait for ever; the launch is refused naming what is missing."""
    from msagent.errors import ConfigError
    from msagent.runtime import Resources

    with pytest.raises(ConfigError, match=r"service 'Gpu' asks for 0.5 GPU per instance, but "
                       r"the Ray this run started on this machine has 0 GPU; a GPU share"):
        launch(SlowStart, name="Gpu", resources=Resources(num_gpus=0.5))
    with pytest.raises(ConfigError, match=r"asks for 0.01 msagent_head .*has 0 msagent_head; "
                       r"custom resources name the nodes of a Ray cluster: pass --address"):
        launch(SlowStart, name="Head", resources=Resources(custom={"msagent_head": 0.01}))
    assert not {"Gpu", "Head"} & set(state.current().services())


def test_a_stale_route_view_is_refreshed_without_blocking_the_caller() -> None:
    registry = _SlowRegistry(delay_s=0.5)
    router = Router(registry, "svc")  # type: ignore[arg-type]
    assert isinstance(router.pick(), Route) and registry.lookups == 1
    time.sleep(REFRESH_S + 0.05)
    start = time.perf_counter()
    router.pick()
    assert time.perf_counter() - start < 0.2  # the slow lookup runs in the background
    deadline = time.monotonic() + 5
    while registry.lookups < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert registry.lookups == 2


def test_calls_beyond_a_full_batch_lead_the_next_batch_at_once() -> None:
    batcher = Batcher(lambda x: [v * 2 for v in x], "t.double", batch=2, max_wait_ms=2000.0)
    results: list[int] = []
    start = time.perf_counter()
    threads = [threading.Thread(target=lambda i=i: results.append(batcher.submit((i,), {})))
               for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [0, 2, 4, 6]
    assert time.perf_counter() - start < 1.5  # two full batches, no 2 s gathering window
    assert dict(batcher.batch_sizes) == {2: 2}


def test_calls_arriving_while_a_batch_runs_form_the_next_batch_without_waiting() -> None:
    def slow_double(x: list[int]) -> list[int]:
        time.sleep(0.3)
        return [v * 2 for v in x]

    batcher = Batcher(slow_double, "t.slow", batch=8, max_wait_ms=0.0, lock=threading.Lock())
    results: list[int] = []
    threads = [threading.Thread(target=lambda i=i: results.append(batcher.submit((i,), {})))
               for i in range(4)]
    threads[0].start()
    time.sleep(0.1)  # the first call runs alone (no window); the others arrive meanwhile
    for thread in threads[1:]:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [0, 2, 4, 6]
    assert dict(batcher.batch_sizes) == {1: 1, 3: 1}


def test_a_follower_answers_from_memory_and_never_goes_back(backend: str) -> None:
    follower = follow("params/follow")
    try:
        assert follower.latest() == (0, None)
        assert follower.wait_newer(0, timeout_s=0.2) is None
        threading.Timer(0.2, publish, args=("params/follow", "v1")).start()
        assert follower.wait_newer(0, timeout_s=10) == (1, "v1")
        for i in range(2, 6):
            publish("params/follow", f"v{i}")
        deadline = time.monotonic() + 10
        while follower.latest()[0] < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert follower.latest() == (5, "v5")
    finally:
        follower.close()
    with pytest.raises(RuntimeError, match="closed"):  # nothing newer can come any more
        follower.wait_newer(timeout_s=1.0)


def test_the_embedded_ray_drops_only_its_token_auth_on_notice() -> None:
    import logging

    from msagent.runtime.ray_backend import TOKEN_NOTICE_LOGGER, _import_ray

    _import_ray(embedded=True)
    _import_ray(embedded=True)  # one filter, however often Ray is started
    notices = logging.getLogger(TOKEN_NOTICE_LOGGER)
    assert len(notices.filters) == 1

    def passes(message: str) -> bool:
        record = notices.makeRecord(notices.name, logging.WARNING, __file__, 1, message, (),
                                    None)
        return notices.filter(record)

    assert not passes("Token authentication is enabled for this Ray cluster. Set ...")
    assert passes("Token authentication is disabled for this Ray cluster. Anyone with ...")
