"""Metrics: windowed mean return, sliding steps/s, counters, thread safety."""

from __future__ import annotations

import threading

import pytest

from msagent.telemetry import Metrics
from tests.telemetry.helpers import FakeClock


def test_mean_return_covers_the_last_window_episodes() -> None:
    metrics = Metrics(window=3)
    assert metrics.snapshot()["mean_return"] is None
    for ret, length in [(100.0, 10), (1.0, 1), (2.0, 2), (3.0, 3)]:
        metrics.record_episode(ret, length)
    snap = metrics.snapshot()
    assert snap["mean_return"] == pytest.approx(2.0) and snap["mean_length"] == pytest.approx(2.0)
    assert snap["episodes"] == 4 and snap["returns_in_window"] == 3 and snap["return_window"] == 3


def test_steps_per_s_is_measured_over_the_sliding_window() -> None:
    clock = FakeClock()
    metrics = Metrics(rate_window_s=5.0, clock=clock)
    for _ in range(10):  # 1000 steps/s for 10 s
        clock.now += 1.0
        metrics.add_env_steps(1000)
    assert metrics.snapshot()["steps_per_s"] == pytest.approx(1000.0)
    for _ in range(10):  # then 100 steps/s: the old rate must leave the window
        clock.now += 1.0
        metrics.add_env_steps(100)
    snap = metrics.snapshot()
    assert snap["steps_per_s"] == pytest.approx(100.0)
    assert snap["env_steps"] == 11_000 and snap["elapsed_s"] == pytest.approx(20.0)


def test_rate_decays_when_steps_stop() -> None:
    clock = FakeClock()
    metrics = Metrics(rate_window_s=5.0, clock=clock)
    clock.now += 1.0
    metrics.add_env_steps(500)
    assert metrics.snapshot()["steps_per_s"] == pytest.approx(500.0)
    clock.now += 9.0
    assert metrics.snapshot()["steps_per_s"] == pytest.approx(0.0)


def test_steps_in_slow_bursts_read_as_a_rate_between_bursts() -> None:
    # A slow game's workers report 4,000 steps every 15 s: 10 s after a burst the rate is
    # still there (a fixed 5 s window read 0), and a minute after the last one it is gone.
    clock = FakeClock()
    metrics = Metrics(rate_window_s=5.0, clock=clock)
    for _ in range(6):
        for _ in range(30):  # the driver polls often; most polls bring no steps
            clock.now += 0.5
            metrics.add_env_steps(0)
        metrics.add_env_steps(4000)
    clock.now += 10.0
    assert 4000 / 25 <= metrics.snapshot()["steps_per_s"] <= 4000 / 15
    clock.now += 60.0
    assert metrics.snapshot()["steps_per_s"] == pytest.approx(0.0)


def test_frequent_adds_stay_accurate_and_bounded() -> None:
    clock = FakeClock()
    metrics = Metrics(rate_window_s=5.0, clock=clock)
    for _ in range(20_000):  # 2000 steps/s in 1 ms ticks for 20 s
        clock.now += 0.001
        metrics.add_env_steps(2)
    assert metrics.snapshot()["steps_per_s"] == pytest.approx(2000.0, rel=0.03)
    assert len(metrics._marks) < 60


def test_losses_version_and_counters() -> None:
    metrics = Metrics()
    metrics.record_losses({"policy": 0.5, "value": 1}, policy_version=3)
    metrics.record_losses({"policy": 0.25}, policy_version=4)
    metrics.counter("dropped_stale_fragments", 2)
    metrics.counter("dropped_stale_fragments")
    snap = metrics.snapshot()
    assert snap["losses"] == {"policy": 0.25} and snap["policy_version"] == 4
    assert snap["updates"] == 2 and snap["counters"] == {"dropped_stale_fragments": 3}


def test_snapshot_is_a_copy() -> None:
    metrics = Metrics()
    metrics.counter("x")
    metrics.snapshot()["counters"]["x"] = 99
    assert metrics.snapshot()["counters"]["x"] == 1


def test_concurrent_updates_are_not_lost() -> None:
    metrics = Metrics(window=5)

    def work() -> None:
        for _ in range(2000):
            metrics.add_env_steps(1)
            metrics.record_episode(1.0, 1)
            metrics.counter("c")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    snap = metrics.snapshot()
    assert snap["env_steps"] == 8000 and snap["episodes"] == 8000 and snap["counters"]["c"] == 8000
