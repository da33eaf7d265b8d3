"""Publish/subscribe: versions only grow, waiting works, large values are shared."""

from __future__ import annotations

import threading
import time

import numpy as np

from msagent import publish, subscribe


def test_versions_grow_by_one_per_publish(backend: str) -> None:
    sub = subscribe("params/a")
    assert sub.latest() == (0, None)
    assert [publish("params/a", i) for i in range(3)] == [1, 2, 3]
    assert sub.latest() == (3, 2)


def test_subscribers_never_see_a_version_go_back(backend: str) -> None:
    topic, stop = "params/race", threading.Event()
    regressions: list[tuple[int, int]] = []
    seen_max = [0] * 4

    def publisher() -> None:
        for i in range(60):
            publish(topic, {"step": i})

    def reader(slot: int) -> None:
        sub, last = subscribe(topic), 0
        while not stop.is_set():
            version, value = sub.latest()
            if version < last:
                regressions.append((last, version))
            if version:
                assert value["step"] + 1 <= version  # a value is never newer than its version
            last = version
        seen_max[slot] = last

    readers = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    writers = [threading.Thread(target=publisher) for _ in range(2)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join()
    time.sleep(0.2)
    stop.set()
    for t in readers:
        t.join()
    assert not regressions
    assert subscribe(topic).latest()[0] == 120
    assert max(seen_max) == 120


def test_wait_newer_blocks_until_a_publish_and_times_out(backend: str) -> None:
    sub = subscribe("params/wait")
    assert sub.wait_newer(0, timeout_s=0.2) is None
    threading.Timer(0.3, publish, args=("params/wait", "v1")).start()
    start = time.perf_counter()
    assert sub.wait_newer(0, timeout_s=10) == (1, "v1")
    assert 0.2 < time.perf_counter() - start < 5


def test_large_value_reaches_every_subscriber(backend: str) -> None:
    weights = {"w": np.arange(2_500_000, dtype=np.float32)}  # 10 MB
    version = publish("params/big", weights)
    for _ in range(3):
        got_version, got = subscribe("params/big").latest()
        assert got_version == version
        np.testing.assert_array_equal(got["w"], weights["w"])


def test_a_versions_only_subscriber_sees_versions_but_moves_no_values(backend: str) -> None:
    sub = subscribe("params/peek", values=False)
    publish("params/peek", np.ones(4))
    assert sub.latest() == (1, None)
    threading.Timer(0.2, publish, args=("params/peek", np.zeros(4))).start()
    assert sub.wait_newer(timeout_s=10) == (2, None)
    assert subscribe("params/peek").latest()[1].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_a_reused_ray_forgets_an_earlier_run_s_topics(ray_only: str) -> None:
    """A test session's (or a notebook's) Ray runs one run after another: the next run's
    followers must not adopt the parameters the last one left on the same topic name."""
    from msagent.runtime import state

    publish("params/main", {"w": 1})
    assert subscribe("params/main").latest() == (1, {"w": 1})
    assert state.installed().forget_topics() >= 1
    assert subscribe("params/main").latest() == (0, None)
    assert publish("params/main", {"w": 2}) == 1  # versions start afresh
