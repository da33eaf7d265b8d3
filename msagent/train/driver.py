"""``run_training``: start the services, watch them until a stop criterion or a signal, keep
them alive (the supervisor), checkpoint periodically and at the end, and stop cleanly."""

from __future__ import annotations

import logging
import shutil
import time
from contextlib import nullcontext
from typing import Any

import msagent
from msagent.config import TrainConfig
from msagent.errors import MsagentError, ServiceDiedError
from msagent.rundir import RunDir
from msagent.rundir.directory import SPILL_NAME
from msagent.runtime import state
from msagent.runtime.backend import InstanceGone
from msagent.telemetry import DROPPED, Metrics, ProgressDisplay, ScalarWriter, log_to_file
from msagent.telemetry.stopping import stop_reason
from msagent.services.inference import InferenceServer, mean_batch_size
from msagent.services.learner import Learner
from msagent.services.looping import Looping, Stoppable
from msagent.train.resume import ResumePlan, resume_plan, run_info
from msagent.train.signals import STOP_FILE_REASON, StopFile, StopSignals
from msagent.train.exploit_watch import ScheduledExploits
from msagent.train.retention_watch import RetentionWatch
from msagent.train.feed_watch import FeedWatch
from msagent.train.initial_weights import build_each_network
from msagent.train.placement import new_instances, placement_lines, placements_of
from msagent.train.league_watch import LeagueWatch
from msagent.train.solo_watch import RunWatch, SoloWatch
from msagent.train.supervisor import Supervisor, SupervisorSettings
from msagent.train.user_hooks import CALLBACK_ERRORS, DriverHooks
from msagent.train.run_services import RunInfo, Services
from msagent.train.wiring import connect_services

log = logging.getLogger("msagent.train")
POLL_S = 0.1
STOP_S = 30.0
"""How long, at the end or after a failure, workers and the learner get to end their loops."""
LOST = "fragments_lost"
REPLACED = "worker_replacements"
ENV_ERRORS = "env_errors"
ENV_ERRORS_SHOWN = 5
"""Env errors (games broken off) printed on the console; all go to ``train.log``."""


class TrainingError(MsagentError, RuntimeError):
    """A service failed during training."""


def run_training(cfg: TrainConfig, run_dir: RunDir | None = None,
                 resume: bool | ResumePlan = False,
                 league_start: dict[str, Any] | None = None) -> dict[str, Any]:
    """Train as the config says; return the final figures (also shown by ``msagent train``).

    Starts the backend ``run.mode`` names and shuts it down at the end, unless this process
    already had one (chosen with ``msagent.init``, or a test's): then it uses that one and
    stops only the services it launched, leaving the backend (and its Ray) running.
    ``resume`` is True (find the checkpoint here) or the plan the CLI already checked.
    ``league_start``: a fresh league run starts from this league state (its snapshots in the
    run directory): ``msagent exploit``'s frozen target.
    """
    if cfg.league is not None and cfg.league.psro is not None and \
            cfg.league.psro.oracle == "exact":
        from msagent.train.psro_run import run_psro

        return run_psro(cfg, run_dir, resume=bool(resume))
    with log_to_file(run_dir.log_path) if run_dir else nullcontext():
        try:
            return _train(cfg, run_dir, resume_plan(cfg, run_dir, resume), league_start)
        except BaseException as exc:
            log.error("the run failed: %s", exc, exc_info=exc)
            raise


def _train(cfg: TrainConfig, run_dir: RunDir | None, plan: ResumePlan | None,
           league_start: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start the backend and the services, train, and shut down what this run started."""
    run = run_info(run_dir, plan, league_start)
    if plan is None and not cfg.run.address:
        # the policy built once here: a broken script fails now, alike in both modes, before
        # Ray or any service starts (resume: checked; a cluster's driver may lack the game)
        build_each_network(cfg)
    stop_file = StopFile(run_dir.stop_path if run_dir else None)  # before the slow start-up
    owns_backend = state.installed() is None
    msagent.init(backend="inline" if cfg.run.mode == "local" else "ray",
                 address=cfg.run.address or None, torch_threads=cfg.run.torch_threads,
                 log_file=str(run_dir.log_path) if run_dir else None)
    log.info("%s run %s (generation %d)", "resuming" if plan else "starting", run.run_id,
             run.generation)
    services: Services | None = None
    try:
        with StopSignals() as signals:
            services = connect_services(cfg, run)
            return Driver(cfg, services, run_dir, run, plan, (signals, stop_file)).train()
    finally:
        if owns_backend:
            msagent.shutdown()
        elif services is not None:
            _shutdown(services)
        if run_dir is not None:  # the pool's spilled snapshots lived only as long as the pool
            shutil.rmtree(run_dir.path / SPILL_NAME, ignore_errors=True)


def _shutdown(services: Services) -> None:
    """Stop this run's services (workers first) on a backend the run does not own, and drop
    the topics they published: the next run on it must not adopt this one's parameters."""
    for handle in services.all():
        try:
            handle.shutdown()
        except Exception:
            log.exception("could not shut down service %s", handle.name)
    backend = state.installed()
    try:
        if backend is not None:
            backend.forget_topics()
    except Exception:
        log.exception("could not drop the run's topics")


class Driver:
    """Watches one run: progress, supervision, checkpoints, stop criteria and signals."""

    def __init__(self, cfg: TrainConfig, services: Services, run_dir: RunDir | None,
                 run: RunInfo, plan: ResumePlan | None,
                 stops: tuple[StopSignals, StopFile]) -> None:
        self.cfg, self.services, self.run_dir, self.run = cfg, services, run_dir, run
        self.signals, self.stop_file = stops
        self.metrics = Metrics(window=cfg.run.stop.return_window)
        if plan is not None:
            self.metrics.load_state_dict(plan.progress)
        sv = cfg.services
        per_feeder = cfg.data.streams if cfg.data.source == "store" else sv.env_worker.num_envs
        self.supervisor = Supervisor(services, SupervisorSettings(per_feeder, {
            services.workers.name: sv.env_worker.max_restarts,
            InferenceServer.__name__: sv.inference.max_restarts,
            **{name: s.max_restarts for name, s in sv.custom.items()}}))
        self.writer = ScalarWriter(run_dir.tensorboard_dir if run_dir and cfg.logging.tensorboard
                                   else None)
        self._next_checkpoint = self._checkpoint_due()
        self._first_step: float | None = None
        self.watch: RunWatch = (
            LeagueWatch(services, cfg.run.stop.eval_games, cfg, self.writer.add)
            if services.league is not None else SoloWatch(services))  # picked once
        if plan is not None:
            self.watch.restore(plan.progress)
        self._last_checkpoint: int | None = plan.step if plan is not None else None
        self._placements: dict[str, list[dict[str, Any]]] = {}
        self._placed_after = -1
        self.hooks = DriverHooks(cfg, services.league is not None, self.metrics.counter)
        self.feed = self._feed() if run_dir is not None else None
        self.exploits = ScheduledExploits.for_run(cfg, run_dir, self.writer.add)
        self.retention = RetentionWatch.for_run(cfg, services, run_dir)

    def _feed(self) -> FeedWatch:
        """The dashboard feed of this run (league state included for league runs)."""
        return FeedWatch(self.run_dir, self.watch.kind, self.watch.feed_state, self._facts)

    def _facts(self) -> dict[str, Any]:
        """Services with their instances and placements, replacements so far, the newest
        checkpoint step."""
        if len(self.supervisor.replacements) != self._placed_after:
            self._report_placements()
        return {"services": {h.name: h.instance_ids() for h in self.services.all()},
                "placements": self._placements,
                "replacements": [r.as_dict() for r in self.supervisor.replacements],
                "checkpoint": self._last_checkpoint, "run_id": self.run.run_id}

    def _report_placements(self) -> None:
        """Print and log where every service runs; later, where replacements landed."""
        before, self._placed_after = self._placements, len(self.supervisor.replacements)
        self._placements = placements_of(self.services.all())
        lines = (placement_lines(self._placements) if not before
                 else new_instances(before, self._placements))
        for line in lines:
            log.info("placement: %s", line)
            if self.cfg.run.mode == "ray" and not before:
                print(f"placement: {line}", flush=True)

    def train(self) -> dict[str, Any]:
        """Start the loops, watch until done; on any failure stop and save what can be saved."""
        self._report_placements()
        try:
            for learner in self.services.learners.values():
                learner.call_all(Learner.run)
            self.services.workers.call_all(Looping.run)
            if self.services.readers is not None:
                self.services.readers.call_all(Looping.run)
            if self.services.evaluator is not None:
                self.services.evaluator.call_all(Looping.run)
            reason = self._watch()
        except BaseException:
            self._close_exploits()
            self.supervisor.close()
            self._after_failure()
            self.writer.close()
            raise
        self._close_exploits()
        self.supervisor.close()
        age_at_stop = _process_age_s()
        result = self._finish(reason)
        result["seconds_since_process_start"] = round(age_at_stop, 2)
        return result

    def _watch(self) -> str:
        """Poll, show progress, write scalars and checkpoints until a reason to stop."""
        next_log, reason = 0.0, None
        with ProgressDisplay(self.cfg.logging.progress, self.cfg.logging.log_every_s) as display:
            while reason is None:
                time.sleep(POLL_S)
                self._collect()
                snap = {**self.metrics.snapshot(), "league": self.watch.view(),
                        **self.hooks.view()}
                self.hooks.evaluation(snap["league"])
                display.update(snap)
                if time.monotonic() >= next_log:
                    self.writer.write(snap)
                    next_log = time.monotonic() + self.cfg.logging.log_every_s
                if time.monotonic() >= self._next_checkpoint:
                    self._checkpoint()
                if self.feed is not None:
                    self.feed.tick(snap)
                if self.exploits is not None:
                    self.exploits.poll()
                if self.retention is not None:
                    self.retention.poll()
                reason = self._stop_reason(snap)
        return reason

    def _close_exploits(self) -> None:
        """Stop a scheduled exploit still running (the run ends)."""
        if self.exploits is not None:
            self.exploits.close()

    def _stop_reason(self, snap: dict[str, Any]) -> str | None:
        """A stop criterion reached, a stop signal received or a STOP file found."""
        if self.signals.received:
            log.warning("%s received: stopping cleanly", self.signals.received)
            return f"interrupted by {self.signals.received}"
        if self.stop_file.requested():
            return STOP_FILE_REASON
        return self.watch.stop_reason() or stop_reason(snap, self.cfg.run.stop)

    def _collect(self) -> None:
        """Supervise, then move episodes, env steps and learner statistics into the metrics."""
        replaced_before = len(self.supervisor.replacements)
        lost_before = self.supervisor.lost_fragments
        for iid, drained in self.supervisor.poll().items():
            self._first_step = min(filter(None, (self._first_step,
                                                 drained.get("first_step_time"))), default=None)
            self.metrics.add_env_steps(drained["env_steps"])
            for ret, length in drained["episodes"]:
                self.metrics.record_episode(ret, length)
            self._env_errors([f"{iid}: {e}" for e in drained.get("env_errors", [])])
        self._count(REPLACED, len(self.supervisor.replacements) - replaced_before)
        self._count(LOST, self.supervisor.lost_fragments - lost_before)
        every = self._learner_stats()
        for stats in every.values():
            if stats["error"] is not None:
                raise self._died_meanwhile() or stats["error"].rebuild("the learner failed")
        stats = next(iter(every.values()))
        seen = self.metrics.snapshot()
        if stats["updates"] > seen["updates"]:
            self.metrics.record_losses(stats["losses"], stats["version"])
        dropped = sum(s["dropped_fragments"] for s in every.values())
        self._count(DROPPED, dropped - seen["counters"].get(DROPPED, 0))
        self.hooks.gather(every)
        self.watch.poll(every)

    def _env_errors(self, errors: list[str]) -> None:
        """Count and log the games an env error broke off; show the first few."""
        if not errors:
            return
        before = self.metrics.snapshot()["counters"].get(ENV_ERRORS, 0)
        for seen, error in enumerate(errors, before):
            log.warning("env error: %s (the game is dropped, its env rebuilt)", error)
            if seen < ENV_ERRORS_SHOWN:
                more = ("; further ones are counted as env_errors= and logged in train.log"
                        if seen == ENV_ERRORS_SHOWN - 1 else "")
                print(f"env error: {error} (the game is dropped, its env rebuilt{more})",
                      flush=True)
        self.metrics.counter(ENV_ERRORS, len(errors))

    def _count(self, name: str, n: int) -> None:
        """Add to an event counter when something happened."""
        if n > 0:
            self.metrics.counter(name, n)

    def _died_meanwhile(self) -> ServiceDiedError | None:
        """A stateful service found dead, named (rather than a failed call to it); or None."""
        time.sleep(0.5)  # a dead service fails a call to it before it is reaped
        for handle in self.services.stateful():
            dead = handle.reap()
            if dead:
                return ServiceDiedError(f"service {handle.name} died ({', '.join(dead)})")
        return None

    def _learner_stats(self) -> dict[str, dict[str, Any]]:
        """Every learner's counters by player (a learner that died meanwhile is named)."""
        out = {}
        for player, handle in self.services.learners.items():
            found = list(handle.call_each(Learner.stats).values())
            if not found:
                handle.reap()
                raise ServiceDiedError(f"service {handle.name} died")
            out[player] = rank_zero(found)
        return out

    def _checkpoint(self, may_stop: bool = True) -> int | None:
        """Ask the learner to write a checkpoint with the driver's progress; its step (then
        the user's ``on_checkpoint``, which may stop the run unless it is stopping)."""
        self._next_checkpoint = self._checkpoint_due()
        if self.run_dir is None:
            return None
        run = {"run_id": self.run.run_id, "generation": self.run.generation}
        try:
            step = self.watch.checkpoint(self.run_dir, self.metrics.state_dict(), run)
        except InstanceGone as exc:  # a learner died during it: name it, as a poll would
            raise self._died_meanwhile() or exc from None
        if step is not None:
            log.info("checkpoint %d written", step)
            self._last_checkpoint = step
            self.hooks.checkpoint(step, str(self.run_dir.checkpoint_dir), may_stop)
        return step

    def _checkpoint_due(self) -> float:
        """When the next periodic checkpoint is due (never when disabled)."""
        every = self.cfg.services.learner.checkpoint_every_s
        return time.monotonic() + every if every else float("inf")

    def _finish(self, reason: str) -> dict[str, Any]:
        """Stop workers, then the learner; final checkpoint; the result."""
        batch = mean_batch_size(self.services.inference.stats()) if self.services.inference \
            else None
        for handle in (self.services.workers, self.services.readers, self.services.evaluator):
            if handle is not None:  # an instance that died meanwhile has nothing to stop
                handle.call_each(Looping.stop)
        learners = {p: rank_zero(h.call_all(Learner.stop, STOP_S))
                    for p, h in self.services.learners.items()}
        learner = next(iter(learners.values()))
        self.hooks.gather(learners, may_stop=False)
        step = self._checkpoint(may_stop=False)
        snap = {**self.metrics.snapshot(), **self.hooks.view()}
        self.writer.write(snap)
        self.writer.close()
        if self.feed is not None:
            self.feed.tick({**snap, "league": self.watch.view()}, final=True)
        log.info("training stopped: %s", reason)
        return {"stop_reason": reason, "signal": self.signals.received,
                "env_steps": snap["env_steps"], "mean_return": snap["mean_return"],
                "episodes": snap["episodes"], "updates": learner["updates"],
                "policy_version": learner["version"], "snapshots": learner["snapshots"],
                "dropped_fragments": learner["dropped_fragments"],
                "fragments_lost": self.supervisor.lost_fragments,
                "env_errors": snap["counters"].get(ENV_ERRORS, 0),
                "user": snap["user"], CALLBACK_ERRORS: snap["counters"].get(CALLBACK_ERRORS, 0),
                "replacements": [r.as_dict() for r in self.supervisor.replacements],
                "checkpoint": step, "elapsed_s": round(snap["elapsed_s"], 2),
                "first_step_s": _since_process_start(self._first_step),
                "inference_mean_batch": batch,
                **self.watch.result(learners, self.run_dir)}

    def _after_failure(self) -> None:
        """End the loops of what still lives, and checkpoint if the learner lives and is sound."""
        stoppable = [(self.services.workers, ()), (self.services.readers, ()),
                     (self.services.evaluator, ()),
                     *((h, (5.0,)) for h in self.services.learners.values())]
        for handle, args in ((h, a) for h, a in stoppable if h is not None):
            try:
                handle.reap()
                handle.call_each(Stoppable.stop, *args)
            except Exception:  # the failure being raised matters more than this one
                log.exception("could not stop %s after a failure", handle.name)
        try:
            if all(h.instance_ids() for h in self.services.learners.values()):
                step = self._checkpoint(may_stop=False)
                log.info("final checkpoint after the failure: %s", step)
        except Exception:
            log.exception("no final checkpoint could be written")


def rank_zero(stats: list[dict[str, Any]]) -> dict[str, Any]:
    """Rank 0's statistics among a learner group's (a lone learner's own)."""
    return next((s for s in stats if s.get("rank", 0) == 0), stats[0])


def _since_process_start(when: float | None) -> float | None:
    """Seconds from this process's start to the wall time ``when`` (None stays None)."""
    import psutil

    return None if when is None else round(when - psutil.Process().create_time(), 2)


def _process_age_s() -> float:
    """Seconds since this process started (for time-to-target figures)."""
    import psutil

    return time.time() - psutil.Process().create_time()
