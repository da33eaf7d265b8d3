"""Chaos benchmark: env workers killed with SIGKILL during a Ray-mode run, against a clean run.

Run: ``python benchmarks/chaos.py [--duration 300] [--every 30] [--workers 4]``. In one
invocation it trains ``examples/cartpole_ppo.toml`` on the embedded Ray twice, each time as a
fresh ``msagent train`` process for ``--duration`` seconds with ``--workers`` env workers:

* clean: nobody kills anything;
* chaos: every ``--every`` seconds one env worker process (found by its Ray process title) is
  killed with SIGKILL; the supervisor replaces it.

It prints env steps/s of both, their ratio against the target (0.9 x (workers-1)/workers of the
clean run: one worker of four may be missing at any time), the number of replacements, and the
time each took (until started, and until its first env steps).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
WORKER_TITLE = "EnvWorkerService"
"""Ray titles an env worker's process ``ray::EnvWorkerService...``."""


def env_worker_pids(parent: int) -> list[int]:
    """Pids of the live env worker processes (Ray actors) of this machine."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = " ".join(proc.info["cmdline"] or [])
        if cmd.startswith("ray::") and WORKER_TITLE in cmd and proc.info["pid"] != parent:
            found.append(proc.info["pid"])
    return sorted(found)


class Killer(threading.Thread):
    """Kills one env worker every ``every`` seconds until stopped."""

    def __init__(self, every: float, parent: int) -> None:
        super().__init__(daemon=True)
        self.every, self.parent = every, parent
        self.kills: list[tuple[float, int]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        """Wait ``every`` s, kill the oldest worker, repeat."""
        start = time.monotonic()
        while not self.stopped.wait(self.every):
            pids = env_worker_pids(self.parent)
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                self.kills.append((round(time.monotonic() - start, 1), pids[0]))


def train(duration: float, workers: int, every: float | None) -> dict[str, Any]:
    """One ``msagent train`` process; with ``every``, kill env workers meanwhile."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "msagent", "train", str(ROOT / "examples/cartpole_ppo.toml"),
               "--mode", "ray", "--set", f"run.root={tmp!r}", "--set", "run.stop.mean_return=0",
               "--set", "run.stop.env_steps=0", "--set", f"run.stop.time_s={duration}",
               "--set", f"services.env_worker.num={workers}", "--set", "logging.progress=false",
               "--set", "logging.tensorboard=false", "--result-json", str(out)]
        env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=env)
        killer = Killer(every, proc.pid) if every else None
        if killer:
            killer.start()
        output, _ = proc.communicate(timeout=duration + 600)
        if killer:
            killer.stopped.set()
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"msagent train failed (rc {proc.returncode}):\n{output[-4000:]}")
        result = json.loads(out.read_text())
    result["rc"] = proc.returncode
    result["kills"] = killer.kills if killer else []
    return result


def main() -> None:
    """Measure a clean run and a chaos run and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=300.0)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    clean = train(args.duration, args.workers, None)
    chaos = train(args.duration, args.workers, args.every)
    rate = {name: r["env_steps"] / r["elapsed_s"] for name, r in (("clean", clean),
                                                                 ("chaos", chaos))}
    target = 0.9 * (args.workers - 1) / args.workers
    reps = chaos["replacements"]
    back = [r["back_s"] for r in reps]
    print(f"clean run: {rate['clean']:8,.0f} env steps/s ({clean['env_steps']:,} steps in "
          f"{clean['elapsed_s']:.0f} s), stop: {clean['stop_reason']}")
    print(f"chaos run: {rate['chaos']:8,.0f} env steps/s ({chaos['env_steps']:,} steps in "
          f"{chaos['elapsed_s']:.0f} s), stop: {chaos['stop_reason']}, rc {chaos['rc']}")
    print(f"ratio chaos/clean: {rate['chaos'] / rate['clean']:.2f}  [target >= {target:.3f}]")
    print(f"kills: {len(chaos['kills'])} at {[t for t, _ in chaos['kills']]} s; replacements: "
          f"{len(reps)}; fragments lost: {chaos['fragments_lost']}; "
          f"dropped stale: {chaos['dropped_fragments']}")
    for r in reps:
        print(f"  {r['dead']} -> {r['new']}: started after {r['ready_s']} s, "
              f"first env steps after {r['back_s']} s")
    worst = max((b for b in back if b is not None), default=None)
    print(f"every worker back within 60 s: {all(b is not None and b < 60 for b in back)} "
          f"(slowest {worst} s)")


if __name__ == "__main__":
    main()
