"""Direct methods: same-node calls over a Unix-socket channel behave as Ray calls do."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Client

import pytest

from msagent import Solver, launch
from msagent.errors import InstanceDiedError, SerializationError
from msagent.runtime.solver import router_for

from tests.runtime.direct_helpers import Direct


def test_direct_calls_answer_as_plain_calls_do(backend: str) -> None:
    handle = launch(Direct)
    assert Solver().retrieve(handle, "echo", "ab", times=3) == "ababab"
    assert Solver().retrieve(handle, "pid") == Solver().retrieve(handle, "plain_pid")
    assert handle.stats()[0]["calls"]["echo"] == 1


def test_direct_calls_use_the_channel_on_ray(ray_only: str) -> None:
    handle = launch(Direct)
    Solver().retrieve(handle, "echo", 1)
    (route,) = router_for(handle)._routes
    assert route.channel and route.channel[0].startswith("\0msagent-")
    start = time.perf_counter()
    for i in range(200):
        assert Solver().retrieve(handle, "echo", i) == i
    assert time.perf_counter() - start < 20.0  # 200 round trips, each well under 0.1 s


def test_direct_batched_calls_from_many_threads_are_gathered(ray_only: str) -> None:
    handle = launch(Direct)
    with ThreadPoolExecutor(4) as pool:  # one channel connection per calling thread
        answers = list(pool.map(lambda i: Solver().retrieve(handle, "predict", i), range(40)))
    assert answers == [i * 10 for i in range(40)]
    sizes = handle.stats()[0]["batch_sizes"]["predict"]
    assert sum(int(s) * c for s, c in sizes.items()) == 40
    assert max(int(s) for s in sizes) > 1, sizes


@pytest.mark.slow
def test_a_slow_concurrent_direct_call_does_not_hold_up_the_others(ray_only: str) -> None:
    handle = launch(Direct)
    Solver().retrieve(handle, "echo", 0)  # the channel is open
    with ThreadPoolExecutor(1) as pool:
        slow = pool.submit(Solver().retrieve, handle, "slow_concurrent", 3.0)
        time.sleep(0.3)
        start = time.perf_counter()
        assert [Solver().retrieve(handle, "echo", i) for i in range(5)] == list(range(5))
        assert time.perf_counter() - start < 2.0  # answered while the slow call still runs
        assert not slow.done()
        assert slow.result(timeout=30) == 3.0


def test_a_bad_call_in_a_batch_fails_alone(ray_only: str) -> None:
    handle = launch(Direct)
    with ThreadPoolExecutor(3) as pool:
        good = [pool.submit(Solver().retrieve, handle, "predict", i) for i in (1, 2)]
        bad = pool.submit(Solver().retrieve, handle, "predict", 3, nonsense=True)
        assert [f.result(timeout=30) for f in good] == [10, 20]
        with pytest.raises(TypeError, match="nonsense"):
            bad.result(timeout=30)


def test_a_malformed_message_ends_only_its_own_connection(ray_only: str) -> None:
    handle = launch(Direct)
    assert Solver().retrieve(handle, "echo", 1) == 1
    (route,) = router_for(handle)._routes
    address, key = route.channel
    rogue = Client(address, family="AF_UNIX", authkey=key)
    rogue.send_bytes(b"not a pickle")
    assert rogue.poll(10.0)  # readable: the server closed it (EOF) rather than hanging
    with pytest.raises((EOFError, ConnectionError, OSError)):
        rogue.recv_bytes()  # the server closed it
    assert [Solver().retrieve(handle, "echo", i) for i in range(3)] == [0, 1, 2]


def test_remote_errors_keep_their_type_and_unpicklable_results_are_named(ray_only: str) -> None:
    handle = launch(Direct)
    with pytest.raises(KeyError, match="boom") as info:
        Solver().retrieve(handle, "fail", "boom")
    assert any("remote traceback" in note for note in getattr(info.value, "__notes__", []))
    with pytest.raises(SerializationError, match="unpicklable"):
        Solver().retrieve(handle, "unpicklable")
    with pytest.raises(SerializationError, match="Direct#0.echo"):
        Solver().retrieve(handle, "echo", threading.Lock())
    assert Solver().retrieve(handle, "echo", 7) == 7  # the channel keeps serving


def test_a_killed_instance_fails_direct_calls_in_flight_clearly(ray_only: str) -> None:
    handle = launch(Direct)
    victim = Solver().retrieve(handle, "pid")
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(Solver().retrieve, handle, "sleep", 5.0)
        time.sleep(0.5)
        os.kill(victim, signal.SIGKILL)
        error = future.exception(timeout=60)
    assert isinstance(error, InstanceDiedError) and "died while running 'sleep'" in str(error)
