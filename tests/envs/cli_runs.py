"""``msagent train`` in a subprocess that is asked to stop (its run's STOP file, as
``msagent stop`` writes it) once what a test checks has happened, instead of training for a
padded ``time_s``."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msagent.rundir import RunDir
from tests.train.helpers import feed_state

Ready = Callable[[dict[str, Any], set[str]], bool]
"""Whether to stop, given the run's dashboard feed and its snapshot file names."""


def train_until(cmd: list[str], runs: Path, ready: Ready, env: dict[str, str], cwd: Path,
                timeout_s: float = 240) -> tuple[int, str, str]:
    """Run ``cmd`` (``msagent train`` writing run directories under ``runs``) until it ends;
    STOP once ``ready``. Output goes to files beside ``runs`` (a full pipe would block it).

    Returns:
        The exit code, stdout and stderr.
    """
    out, err = runs.parent / "stdout.txt", runs.parent / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=env, cwd=cwd)
        try:
            _stop_when_ready(runs, proc, ready, timeout_s)
            proc.wait(timeout=timeout_s)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return proc.returncode, out.read_text(), err.read_text()


def _stop_when_ready(runs: Path, proc: subprocess.Popen, ready: Ready, timeout_s: float) -> None:
    """Poll the run's feed and snapshots; write its STOP file once ``ready`` holds."""
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        found = next(iter(runs.glob("*/.msagent-run")), None)
        if found is not None:
            run = RunDir(found.parent)
            snapshots = {p.name for p in run.path.glob("snapshots/*.safetensors")}
            if ready(feed_state(run), snapshots):
                run.stop_path.touch()
                return
        time.sleep(0.5)


def random_bot_seats(feed: dict[str, Any]) -> set[int]:
    """The seats from which the evaluator has played the random bot."""
    return {e["seat"] for e in feed.get("eval", [])
            if e["opponent"] == "bot:random" and e["games"] >= 1}


def newest_version(snapshots: set[str], player: str) -> int:
    """The highest snapshot version of ``player`` among snapshot file names (0: none)."""
    return max((int(name[len(player) + 1:-len(".safetensors")]) for name in snapshots
                if name.startswith(f"{player}@")), default=0)
