"""Start-up probe: how long Ray mode takes to its first env step, and each process's memory.

Run by ``benchmarks/cartpole.py`` as a fresh process (``python benchmarks/startup_probe.py
[--set key=value ...]``): it imports what ``msagent train`` imports, starts the embedded Ray and
the services of ``examples/cartpole_ppo.toml`` as the driver does, waits for the first env
step, measures the PSS of every service process (``handle.placements()`` gives their pids),
and with central inference also the mean predict batch over a few seconds of training. It
prints one JSON line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import psutil

PROCESS_START = psutil.Process().create_time()

import msagent  # noqa: E402
import msagent.cli  # noqa: E402,F401  (the imports of `msagent train`)
from msagent.config.loader import load_config  # noqa: E402
from msagent.services.inference import mean_batch_size  # noqa: E402
from msagent.services.learner import Learner  # noqa: E402
from msagent.services.looping import Drainable, Looping  # noqa: E402
from msagent.train.run_services import RunInfo, Services  # noqa: E402
from msagent.train.wiring import connect_services  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "examples" / "cartpole_ppo.toml"
BATCH_SECONDS = 5.0
"""Training time over which the mean predict batch is measured (central inference)."""


def since_start() -> float:
    """Seconds since this process started."""
    return time.time() - PROCESS_START


def first_step(services: Services) -> float:
    """Wait for the workers' first env step; its seconds since process start."""
    while True:
        times = [d.get("first_step_time") for d in services.workers.call_all(Drainable.drain)]
        if any(times):
            return min(t for t in times if t) - PROCESS_START
        time.sleep(0.01)


def pss_mib(pid: int) -> float:
    """Proportional set size of one process, in MiB."""
    return psutil.Process(pid).memory_full_info().pss / 2**20


def memory(services: Services) -> dict[str, object]:
    """PSS per service process, of Ray's own processes, and of this driver."""
    per, pids = {}, set()
    for handle in services.all():
        for index, place in enumerate(handle.placements()):
            per[f"{handle.name}#{index}"] = round(pss_mib(place["pid"]), 1)
            pids.add(place["pid"])
    others = [p.pid for p in psutil.Process().children(recursive=True) if p.pid not in pids]
    return {"pss_mib": per, "ray_system_pss_mib": round(sum(map(pss_mib, others)), 1),
            "driver_pss_mib": round(pss_mib(psutil.Process().pid), 1)}


def main() -> None:
    """Start, measure, stop; print the figures as one JSON line."""
    import json

    cfg = load_config(CONFIG, [a for a in sys.argv[1:] if a != "--set"])
    msagent.init(backend="ray")
    out: dict[str, object] = {"ray_up_s": round(since_start(), 2)}
    services = connect_services(cfg, RunInfo())
    out["services_up_s"] = round(since_start(), 2)
    services.learner.call_all(Learner.run)
    services.workers.call_all(Looping.run)
    out["first_step_s"] = round(first_step(services), 2)
    out.update(memory(services))
    if services.inference is not None:
        time.sleep(BATCH_SECONDS)
        out["inference_mean_batch"] = mean_batch_size(services.inference.stats())
    services.workers.call_all(Looping.stop)
    services.learner.call_all(Learner.stop)
    msagent.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
