"""SIGINT (Ctrl-C: the whole process group), SIGTERM and ``msagent stop RUN_DIR`` stop
``msagent train`` cleanly: the services stop, a final checkpoint is written, the result is
printed, and the exit code says which signal it was (130 / 143; 0 after ``msagent stop``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from msagent.cli import USER_ERROR_EXIT, app
from msagent.rundir import RunDir
from msagent.train import driver, run_training
from msagent.train.signals import REPEAT_WINDOW_S, STOP_FILE_REASON, StopFile, StopSignals
from tests.train.helpers import EXAMPLE, example_config


def start_training(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], Path]:
    """``msagent train`` on the example as its own process group; the result-json path."""
    result = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "msagent", "train", str(EXAMPLE), "--mode", mode,
           "--set", f"run.root={json.dumps(str(tmp_path / 'runs'))}",
           "--set", "run.stop.mean_return=0", "--set", "run.stop.time_s=300",
           "--set", "logging.log_every_s=0.5", "--set", "logging.tensorboard=false",
           "--result-json", str(result)]
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    return proc, result


def wait_for_updates(proc: subprocess.Popen[str], updates: int, timeout_s: float) -> list[str]:
    """Read progress lines until the policy version passes ``updates``; the lines read."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            break
        lines.append(line)
        version = [p for p in line.split() if p.startswith("version=")]
        if version and version[0][8:].isdigit() and int(version[0][8:]) > updates:
            return lines
    pytest.fail("training did not progress:\n" + "".join(lines[-30:]))


@pytest.mark.slow
@pytest.mark.parametrize("mode,sig,group,code", [
    ("local", signal.SIGINT, True, 130),
    ("local", signal.SIGTERM, False, 143),  # the driver's handler, whatever the mode
    ("ray", signal.SIGINT, True, 130),  # Ctrl-C: the whole process group, on the embedded Ray
])
def test_a_stop_signal_writes_a_final_checkpoint_and_the_result(
        tmp_path: Path, mode: str, sig: signal.Signals, group: bool, code: int) -> None:
    proc, result_path = start_training(tmp_path, mode)
    try:
        wait_for_updates(proc, 3, timeout_s=120)
        os.killpg(proc.pid, sig) if group else proc.send_signal(sig)
        output, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == code, output
    assert "Traceback" not in output and "result:" in output, output
    result = json.loads(result_path.read_text())
    assert result["signal"] == sig.name and result["stop_reason"] == f"interrupted by {sig.name}"
    (run_dir,) = [RunDir.open(p) for p in (tmp_path / "runs").iterdir()]
    assert run_dir.checkpoint_steps()[-1] == result["updates"] == result["checkpoint"] >= 3
    assert f"{sig.name} received: stopping cleanly" in run_dir.log_path.read_text()


@pytest.mark.slow
def test_msagent_stop_ends_a_run_from_another_terminal_with_a_final_checkpoint(
        tmp_path: Path) -> None:
    proc, result_path = start_training(tmp_path, "local")
    try:
        wait_for_updates(proc, 3, timeout_s=120)
        (run,) = (tmp_path / "runs").iterdir()
        asked = CliRunner().invoke(app, ["stop", str(run)])
        assert asked.exit_code == 0 and "STOP" in asked.output, asked.output
        output, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, output
    result = json.loads(result_path.read_text())
    assert result["stop_reason"] == STOP_FILE_REASON and result["signal"] is None
    run_dir = RunDir.open(run)
    assert run_dir.checkpoint_steps()[-1] == result["updates"] == result["checkpoint"] >= 3
    assert not run_dir.stop_path.exists()  # removed once seen: a resume starts clean


def test_a_stop_file_left_from_before_is_removed_and_a_new_one_is_seen_once(
        tmp_path: Path) -> None:
    path = tmp_path / "STOP"
    path.touch()
    watch = StopFile(path)
    assert not path.exists() and not watch.requested()
    path.touch()
    assert watch.requested() and not path.exists() and not watch.requested()
    assert not StopFile(None).requested()


def test_msagent_stop_refuses_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    asked = CliRunner().invoke(app, ["stop", str(tmp_path)])
    assert asked.exit_code == USER_ERROR_EXIT and "not an msagent run directory" in asked.output
    assert not (tmp_path / "STOP").exists()


@pytest.mark.slow
def test_a_stop_asked_while_the_services_start_is_kept_and_an_old_one_is_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = example_config(tmp_path, "local", "run.stop.mean_return=0", "run.stop.env_steps=0",
                         "run.stop.time_s=3")
    old = RunDir.create(cfg.run.root, "old")
    old.stop_path.touch()  # left from an earlier stop: removed, the run trains to time_s
    assert run_training(cfg, old)["stop_reason"].startswith("time_s")
    assert not old.stop_path.exists()

    asked = RunDir.create(cfg.run.root, "asked")
    start = driver.connect_services

    def start_while_asked(*args: object) -> object:
        asked.stop_path.touch()  # `msagent stop` while the services start
        return start(*args)

    monkeypatch.setattr(driver, "connect_services", start_while_asked)
    result = run_training(cfg.model_copy(update={"run": cfg.run.model_copy(
        update={"stop": cfg.run.stop.model_copy(update={"time_s": 120.0})})}), asked)
    assert result["stop_reason"] == STOP_FILE_REASON and result["checkpoint"] is not None


def test_a_repeated_signal_interrupts_only_when_it_is_not_the_same_request_delivered_twice(
) -> None:
    now = [100.0]
    signals = StopSignals(clock=lambda: now[0])
    signals._handle(signal.SIGINT, None)
    now[0] += REPEAT_WINDOW_S / 2  # GNU timeout: the command, then its process group
    signals._handle(signal.SIGINT, None)
    assert signals.received == "SIGINT"
    now[0] += REPEAT_WINDOW_S  # a second Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        signals._handle(signal.SIGTERM, None)
    assert signals.received == "SIGINT"
