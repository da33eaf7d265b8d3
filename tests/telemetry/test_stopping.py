"""stop_reason: the first [run.stop] criterion reached, with a full return window."""

from __future__ import annotations

from msagent.config.general import StopSection
from msagent.telemetry import Metrics, stop_reason


def test_env_steps_and_time_limits() -> None:
    metrics = Metrics()
    metrics.add_env_steps(999)
    assert stop_reason(metrics.snapshot(), StopSection(env_steps=1000)) is None
    metrics.add_env_steps(1)
    assert "env_steps" in stop_reason(metrics.snapshot(), StopSection(env_steps=1000))
    assert "time_s" in stop_reason(metrics.snapshot(), StopSection(env_steps=0, time_s=1e-9))


def test_mean_return_needs_a_full_window() -> None:
    stop = StopSection(env_steps=0, mean_return=475.0, return_window=3)
    metrics = Metrics(window=3)
    metrics.record_episode(500.0, 500)
    metrics.record_episode(500.0, 500)
    assert stop_reason(metrics.snapshot(), stop) is None  # mean 500 but only 2 of 3 episodes
    metrics.record_episode(400.0, 400)
    assert stop_reason(metrics.snapshot(), stop) is None  # mean 466.7
    metrics.record_episode(500.0, 500)
    metrics.record_episode(500.0, 500)
    assert stop_reason(metrics.snapshot(), stop) is None  # window 400, 500, 500: 466.7
    metrics.record_episode(500.0, 500)
    assert "mean_return" in stop_reason(metrics.snapshot(), stop)


def test_all_disabled_never_stops() -> None:
    metrics = Metrics()
    metrics.add_env_steps(10**9)
    assert stop_reason(metrics.snapshot(), StopSection(env_steps=0)) is None


def test_eval_win_rate_stops_once_every_opponent_and_seat_holds_it_over_enough_games() -> None:
    from msagent.config.general import StopSection

    stop = StopSection(env_steps=0, eval_win_rate=0.9, eval_games=200)
    base = {"env_steps": 5, "elapsed_s": 1.0, "mean_return": None}

    def snap(rows):
        return {**base, "league": {"eval_rows": rows}}

    ok = {"opponent": "bot:random", "seat": 0, "games": 200, "win_rate": 0.95}
    assert stop_reason(snap([ok, {**ok, "seat": 1, "win_rate": 0.89}]), stop) is None
    assert stop_reason(snap([ok, {**ok, "seat": 1, "games": 150}]), stop) is None
    reason = stop_reason(snap([ok, {**ok, "seat": 1, "win_rate": 0.91}]), stop)
    assert reason is not None and reason.startswith("eval_win_rate 0.910 >= 0.9")
    assert stop_reason(snap([]), stop) is None and stop_reason(base, stop) is None


def test_nash_conv_stops_once_a_measure_is_low_enough() -> None:
    stop = StopSection(env_steps=0, nash_conv=0.1)
    base = {"env_steps": 5, "elapsed_s": 1.0, "mean_return": None}

    def snap(value):
        return {**base, "league": {"nash_conv": {"main": {"player": "main", "version": 40,
                                                          "nash_conv": value}}}}

    assert stop_reason(snap(0.1001), stop) is None
    reason = stop_reason(snap(0.0999), stop)
    assert reason is not None and reason.startswith("nash_conv 0.0999 <= 0.1 (main at version 40")
    assert stop_reason(snap(0.0), StopSection(env_steps=0)) is None  # disabled
    assert stop_reason(base, stop) is None
