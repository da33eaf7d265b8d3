"""``run_training``: start the services, watch progress until a stop criterion, stop cleanly."""

from __future__ import annotations

import logging
import time
from typing import Any

import msagent
from msagent.config import TrainConfig
from msagent.errors import MsagentError
from msagent.rundir import RunDir
from msagent.runtime import Solver
from msagent.telemetry import DROPPED, Metrics, ProgressDisplay, ScalarWriter
from msagent.telemetry.stopping import stop_reason
from msagent.train.wiring import Services, connect_services

log = logging.getLogger("msagent.train")
POLL_S = 0.1


class TrainingError(MsagentError, RuntimeError):
    """A service failed during training."""


def run_training(cfg: TrainConfig, run_dir: RunDir | None = None,
                 resume: bool = False) -> dict[str, Any]:
    """Train as the config says; return the final figures (also shown by ``msagent train``)."""
    msagent.init(backend="inline" if cfg.run.mode == "local" else "ray",
                 address=cfg.run.address or None)
    try:
        services = connect_services(cfg, str(run_dir.path) if run_dir else None, resume)
        services.learner.call_all("run")
        services.workers.call_all("run")
        return _watch(cfg, services, run_dir)
    finally:
        msagent.shutdown()


def _watch(cfg: TrainConfig, services: Services, run_dir: RunDir | None) -> dict[str, Any]:
    """Poll workers and learner, show progress, write scalars, stop when a criterion holds."""
    metrics = Metrics(window=cfg.run.stop.return_window)
    metrics.add_env_steps(_learner_stats()["consumed_steps"])  # > 0 when resuming
    writer = ScalarWriter(run_dir.tensorboard_dir if run_dir and cfg.logging.tensorboard
                          else None)
    next_log, reason = 0.0, None
    with ProgressDisplay(cfg.logging.progress, cfg.logging.log_every_s) as display:
        while reason is None:
            time.sleep(POLL_S)
            _collect(services, metrics)
            snap = metrics.snapshot()
            display.update(snap)
            if time.monotonic() >= next_log:
                writer.write(snap)
                next_log = time.monotonic() + cfg.logging.log_every_s
            reason = stop_reason(snap, cfg.run.stop)
    return _finish(services, metrics, writer, reason)


def _collect(services: Services, metrics: Metrics) -> None:
    """Move episode results, env steps and learner statistics into the metrics."""
    for drained in services.workers.call_all("drain"):
        if drained["error"]:
            raise TrainingError(f"an env worker failed: {drained['error']}")
        metrics.add_env_steps(drained["env_steps"])
        for ret, length in drained["episodes"]:
            metrics.record_episode(ret, length)
    stats = _learner_stats()
    if stats["error"]:
        raise TrainingError(f"the learner failed: {stats['error']}")
    if stats["updates"] > metrics.snapshot()["updates"]:
        metrics.record_losses(stats["losses"], stats["version"])
    dropped = stats["dropped_fragments"] - metrics.snapshot()["counters"].get(DROPPED, 0)
    if dropped > 0:
        metrics.counter(DROPPED, dropped)


def _learner_stats() -> dict[str, Any]:
    """The learner's counters."""
    return Solver().retrieve("Learner", "stats")


def _finish(services: Services, metrics: Metrics, writer: ScalarWriter,
            reason: str) -> dict[str, Any]:
    """Stop workers, then the learner (final checkpoint); return the result."""
    services.workers.call_all("stop")
    learner = Solver().retrieve("Learner", "stop")
    snap = metrics.snapshot()
    writer.write(snap)
    writer.close()
    log.info("training stopped: %s", reason)
    return {"stop_reason": reason, "env_steps": snap["env_steps"],
            "mean_return": snap["mean_return"], "episodes": snap["episodes"],
            "updates": learner["updates"], "policy_version": learner["version"],
            "snapshots": learner["snapshots"], "dropped_fragments": learner["dropped_fragments"],
            "elapsed_s": round(snap["elapsed_s"], 2)}
