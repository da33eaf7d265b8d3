"""Soak benchmark: a league run for a long time, watching what grows.

Run: ``python benchmarks/soak.py [--config examples/connect4_league.toml] [--minutes 60]
[--sample-s 60] [--set KEY=VALUE ...]``. It trains the config on the embedded Ray as a
child ``msagent train`` process and every ``--sample-s`` seconds records, for every process
of the run (the driver, each service actor by its Ray title, Ray's own processes):

- its proportional set size (PSS: shared pages, such as Ray's object store, divided among
  the processes that map them, so the sum is the run's real memory);
- its open file descriptors;

and the run directory's size on disk. At the end it prints the samples as a table and, for
each process kind, the growth per hour fitted over the second half of the run (the first
half holds the warm-up: imports, caches filling, the first snapshots). A leak shows as a
steady growth that no bounded cache explains; the run must also end on its own with rc 0.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from train_proc import train_lines  # noqa: E402

RAY_TITLE = re.compile(r"^ray::(\w+)")
"""A Ray worker's process title: ``ray::LearnerService.run`` or ``ray::IDLE``."""

RUN_DIR = re.compile(r"run directory: (\S+)")


def kind(proc: psutil.Process) -> str:
    """What a process of the run is: a service actor's class, a Ray system process, or the
    driver."""
    cmd = " ".join(proc.cmdline())
    title = RAY_TITLE.match(cmd)
    if title:  # msagent's runtime names each actor class <Service>Service
        return title.group(1).replace("ServiceService", "Service")
    for system in ("raylet", "gcs_server", "dashboard", "log_monitor", "monitor.py",
                   "runtime_env", "redis"):
        if system in cmd:
            return f"ray:{system.removesuffix('.py')}"
    return "msagent train" if " -m msagent train" in cmd else proc.name()


def sample(root: int) -> dict[str, tuple[float, int, int]]:
    """PSS (MiB), open file descriptors and process count of each kind of process under
    ``root`` (itself included)."""
    out: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0])
    with contextlib.suppress(psutil.NoSuchProcess):
        top = psutil.Process(root)
        for proc in [top, *top.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                row = out[kind(proc)]
                row[0] += proc.memory_full_info().pss / 2**20
                row[1] += proc.num_fds()
                row[2] += 1
    return {name: (round(pss, 1), int(fds), int(n)) for name, (pss, fds, n) in out.items()}


def disk_mib(folder: Path | None) -> float:
    """Size of a folder's files, in MiB (0 before the run directory is known)."""
    if folder is None or not folder.exists():
        return 0.0
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20


def growth_per_hour(samples: list[dict], name: str, field: int) -> float:
    """Slope (per hour) of one kind's figure, fitted over the second half of the samples."""
    late = samples[len(samples) // 2:]
    points = [(s["minutes"], s["procs"][name][field]) for s in late if name in s["procs"]]
    if len(points) < 2:
        return float("nan")
    t, y = np.array(points).T
    return float(np.polyfit(t, y, 1)[0] * 60)


def report(samples: list[dict]) -> None:
    """The samples as a table (PSS MiB per kind), then each kind's growth per hour."""
    names = sorted({n for s in samples for n in s["procs"]},
                   key=lambda n: -samples[-1]["procs"].get(n, (0,))[0])
    print("\nminutes | total PSS MiB | fds | run dir MiB | " + " | ".join(names))
    for s in samples:
        total = sum(v[0] for v in s["procs"].values())
        fds = sum(v[1] for v in s["procs"].values())
        cells = [f"{s['procs'][n][0]:.0f}" if n in s["procs"] else "-" for n in names]
        print(f"{s['minutes']:.1f} | {total:.0f} | {fds} | {s['disk']:.1f} | "
              + " | ".join(cells))
    print("\ngrowth per hour over the second half (PSS MiB, fds), processes at the end:")
    for name in names:
        last = samples[-1]["procs"].get(name, (0, 0, 0))
        print(f"  {name}: {growth_per_hour(samples, name, 0):+.1f} MiB/h, "
              f"{growth_per_hour(samples, name, 1):+.1f} fds/h, {last[2]} processes")
    disks = [(s["minutes"], s["disk"]) for s in samples[len(samples) // 2:]]
    if len(disks) >= 2:
        t, y = np.array(disks).T
        print(f"  run directory: {np.polyfit(t, y, 1)[0] * 60:+.1f} MiB/h, "
              f"{samples[-1]['disk']:.1f} MiB at the end")


def main() -> None:
    """Train, sample while it runs, report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=ROOT / "examples" /
                        "connect4_league.toml")
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--sample-s", type=float, default=60.0)
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE", help="config overrides, as msagent train --set")
    args = parser.parse_args()
    samples: list[dict] = []
    run_dir: Path | None = None
    next_at = time.monotonic() + args.sample_s / 4  # a first sample once the services are up
    for minutes, line in train_lines(args.config, args.minutes, args.overrides,
                                     log_every_s=min(30.0, args.sample_s / 2)):
        found = RUN_DIR.search(line)
        run_dir = Path(found.group(1)) if found and run_dir is None else run_dir
        if line.startswith(("step", "league", "eval")) or "error" in line.lower():
            print(f"[{minutes:5.1f} min] {line.rstrip()[:160]}", flush=True)
        if time.monotonic() >= next_at:
            next_at = time.monotonic() + args.sample_s
            samples.append({"minutes": round(minutes, 2), "procs": sample(_train_pid()),
                            "disk": round(disk_mib(run_dir), 1)})
    print(f"msagent train ended normally after {args.minutes} minutes; run directory {run_dir}")
    report(samples)


def _train_pid() -> int:
    """The ``msagent train`` child of this process."""
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if "msagent" in " ".join(child.cmdline()):
                return child.pid
    raise SystemExit("msagent train is not running")


if __name__ == "__main__":
    main()
