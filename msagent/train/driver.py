"""``run_training``: start the services, watch progress until a stop criterion, stop cleanly."""

from __future__ import annotations

import logging
import time
from typing import Any

import msagent
from msagent.config import TrainConfig
from msagent.errors import MsagentError
from msagent.rundir import RunDir
from msagent.runtime import Solver, state
from msagent.telemetry import DROPPED, Metrics, ProgressDisplay, ScalarWriter
from msagent.telemetry.stopping import stop_reason
from msagent.train.wiring import Services, connect_services

log = logging.getLogger("msagent.train")
POLL_S = 0.1
ABORT_STOP_S = 5.0
"""How long, after a failure, each worker and the learner get to end their loops."""


class TrainingError(MsagentError, RuntimeError):
    """A service failed during training."""


def run_training(cfg: TrainConfig, run_dir: RunDir | None = None,
                 resume: bool = False) -> dict[str, Any]:
    """Train as the config says; return the final figures (also shown by ``msagent train``).

    Starts the backend ``run.mode`` names and shuts it down at the end, unless this process
    already had one (chosen with ``msagent.init``, or a test's): then it uses that one and
    stops only the services it launched, leaving the backend (and its Ray) running.
    """
    owns_backend = state.installed() is None
    msagent.init(backend="inline" if cfg.run.mode == "local" else "ray",
                 address=cfg.run.address or None)
    services: Services | None = None
    try:
        services = connect_services(cfg, str(run_dir.path) if run_dir else None, resume)
        services.learner.call_all("run")
        services.workers.call_all("run")
        return _watch(cfg, services, run_dir)
    except BaseException:
        if services is not None:
            _abort(services)
        raise
    finally:
        if owns_backend:
            msagent.shutdown()
        elif services is not None:
            _shutdown(services)


def _abort(services: Services) -> None:
    """After a failure or an interrupt: end the workers' and learner's loops (no checkpoint),
    so that none of their threads outlives the run and calls into a backend that is gone."""
    for handle, args in ((services.workers, ()), (services.learner, (False,))):
        try:
            handle.call_all("stop", *args, timeout_s=ABORT_STOP_S)
        except Exception:  # the failure being raised matters more than this one
            log.exception("could not stop %s after a failure", handle.name)


def _shutdown(services: Services) -> None:
    """Stop this run's services (workers first) on a backend the run does not own."""
    for handle in services.all():
        try:
            handle.shutdown()
        except Exception:
            log.exception("could not shut down service %s", handle.name)


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
    age_at_stop = _process_age_s()
    result = _finish(services, metrics, writer, reason)
    result["seconds_since_process_start"] = round(age_at_stop, 2)
    return result


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
    seen = metrics.snapshot()
    if stats["updates"] > seen["updates"]:
        metrics.record_losses(stats["losses"], stats["version"])
    dropped = stats["dropped_fragments"] - seen["counters"].get(DROPPED, 0)
    if dropped > 0:
        metrics.counter(DROPPED, dropped)


def _process_age_s() -> float:
    """Seconds since this process started (for time-to-target figures)."""
    import psutil

    return time.time() - psutil.Process().create_time()


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
