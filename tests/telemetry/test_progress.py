"""ProgressDisplay: plain lines when not a TTY, a live table on a terminal, silence when off."""

from __future__ import annotations

import io

from msagent.telemetry import Metrics, ProgressDisplay
from msagent.telemetry.formatting import duration, line, rows
from tests.telemetry.helpers import FakeClock


def _snapshot(steps: int = 2048) -> dict:
    metrics = Metrics(window=20)
    metrics.add_env_steps(steps)
    metrics.record_episode(475.0, 475)
    metrics.record_losses({"policy": 0.125, "value": 2.5}, policy_version=7)
    metrics.counter("dropped_stale_fragments", 3)
    return metrics.snapshot()


def test_non_tty_prints_one_line_per_interval() -> None:
    out, clock = io.StringIO(), FakeClock()
    with ProgressDisplay(True, log_every_s=1.0, stream=out, clock=clock) as progress:
        assert not progress.live
        for i in range(10):  # 10 updates over 2.5 s -> lines at 0, 1.0 and 2.0 s, plus the final
            progress.update(_snapshot(steps=1000 + i))
            clock.now += 0.25
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("steps=1000 ") and lines[-1].startswith("steps=1009 ")
    assert "return=475" in lines[0] and "version=7" in lines[0] and "dropped=3" in lines[0]
    assert "policy=0.125" in lines[0]


def test_final_line_not_repeated_when_already_printed() -> None:
    out, clock = io.StringIO(), FakeClock()
    with ProgressDisplay(True, log_every_s=1.0, stream=out, clock=clock) as progress:
        progress.update(_snapshot())
    assert len(out.getvalue().splitlines()) == 1


def test_disabled_prints_nothing() -> None:
    out = io.StringIO()
    with ProgressDisplay(False, log_every_s=0.0, stream=out) as progress:
        progress.update(_snapshot())
    assert out.getvalue() == ""


def test_terminal_shows_a_live_table() -> None:
    out = io.StringIO()
    with ProgressDisplay(True, stream=out, force_terminal=True) as progress:
        assert progress.live
        progress.update(_snapshot(steps=123_456))
    text = out.getvalue()
    assert "123,456" in text and "mean return (last 20)" in text and "dropped stale" in text


def test_rows_and_line_handle_an_empty_start() -> None:
    snap = Metrics().snapshot()
    labels = dict(rows(snap))
    assert labels["policy version"] == "-" and labels["dropped stale fragments"] == "0"
    assert "return=-" in line(snap)


def test_duration_formats() -> None:
    assert duration(42.04) == "42.0s" and duration(187) == "3m07s" and duration(7509) == "2h05m09s"


def test_loss_labels_keep_their_own_prefix() -> None:
    from msagent.telemetry.formatting import rows

    labels = [label for label, _ in rows({"losses": {"losses/policy": 1.0, "kl": 2.0}})]
    assert "losses/policy" in labels and "losses/kl" in labels
    assert not any(label.startswith("loss/losses") for label in labels)


class ClosedPipe(io.StringIO):
    """An output whose reader went away: every write fails as on a broken pipe."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_output_turns_the_display_off_not_the_run(caplog) -> None:
    clock = FakeClock()
    with ProgressDisplay(True, log_every_s=1.0, stream=ClosedPipe(), clock=clock) as progress:
        progress.update(_snapshot(steps=1000))
        clock.now += 2.0
        progress.update(_snapshot(steps=2000))  # no second attempt, no error
    assert not progress.enabled
    assert "progress output closed" in caplog.text
