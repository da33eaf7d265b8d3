"""``msagent train`` as a child process, read line by line: what the learning benchmarks
(Connect Four, Football, Boxing) share to follow a run's progress against wall time."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def train_lines(config: Path, minutes: float, overrides: list[str], log_every_s: float = 30.0,
                extra: tuple[str, ...] = ()) -> Iterator[tuple[float, str]]:
    """Train ``config`` on the embedded Ray for ``minutes`` (no TensorBoard); yield (minutes
    since start, line) of its output, and stop the benchmark with the run's last lines if it
    fails."""
    cmd = [sys.executable, "-m", "msagent", "train", str(config),
           "--set", f"run.stop.time_s={minutes * 60}", "--set", f"logging.log_every_s={log_every_s}",
           "--set", "logging.tensorboard=false", *extra]
    for override in overrides:
        cmd += ["--set", override]
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    start, tail = time.monotonic(), deque(maxlen=40)
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          cwd=ROOT, env=env) as proc:
        for line in proc.stdout:
            tail.append(line.rstrip())
            yield (time.monotonic() - start) / 60, line
    if proc.returncode != 0:
        raise SystemExit("\n".join(tail) + f"\nmsagent train {config.name} exited with "
                         f"{proc.returncode}")
