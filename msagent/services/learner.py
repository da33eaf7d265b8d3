"""The learner: samples fragments, updates the algorithm, publishes parameters and snapshots.

The update rule (GAE, PPO) lives in ``msagent.policy.algorithms``; this file only moves data.
Checkpoints are asked for by the driver (``checkpoint``), which adds its own progress to them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from msagent.errors import ErrorInfo, RateLimitTimeout
from msagent.policy import PPO, PPOConfig
from msagent.rundir import RunDir
from msagent.runtime import Solver, publish, register
from msagent.services.inference import PolicyScripts
from msagent.services.learner_league import LeagueHooks
from msagent.services.learner_state import (LearnerCounters, export_learner, restore_learner,
                                           save_learner)
from msagent.services.params import params_topic
from msagent.user_scripts import build_policy

SAMPLE_WAIT_S = 0.25
"""How long one sample call may wait for fragments (it bounds how fast ``stop`` answers)."""


@dataclass
class LearnerSettings:
    """Everything a learner needs besides the services it talks to.

    ``resume_step`` names the checkpoint to continue from (the driver checked it first).
    """

    scripts: PolicyScripts
    ppo: PPOConfig
    batch_fragments: int
    policy_id: str = "main"
    table: str = "fragments"
    max_policy_lag: int = 0
    publish_every: int = 1
    dump_model_every: int = 10
    run_dir: str | None = None
    resume_step: int | None = None
    league: bool = False
    """League mode: snapshots and resets as ``LeagueService`` orders (see learner_league)."""


class Learner:
    """One learner; ``run`` loops until ``stop`` (multi-learner all-reduce comes later)."""

    def __init__(self, settings: LearnerSettings) -> None:
        self.s = settings
        sc = settings.scripts
        self.ppo = PPO(build_policy(sc.env_script, sc.agent_script, sc.env_params, sc.seed),
                       settings.ppo)
        self.c, self.error = LearnerCounters(), None
        self._batch = settings.batch_fragments
        self._stop, self._lock, self._done = threading.Event(), threading.Lock(), threading.Event()
        self._run_dir = RunDir.open(settings.run_dir) if settings.run_dir else None
        if settings.resume_step is not None and self._run_dir is not None:
            self.c = restore_learner(self._run_dir, self.ppo, settings.resume_step,
                                     settings.policy_id if settings.league else None).counters
        self._league = (LeagueHooks(settings.policy_id, self.ppo, self._run_dir)
                        if settings.league else None)

    @property
    def version(self) -> int:
        """The newest parameter version published."""
        return self.c.version

    @register(response=False)
    def run(self) -> None:
        """Publish the first parameters, then sample-update-publish until stopped."""
        try:
            self._publish()
            if self._league is not None and self._league.after_update(self.c.updates,
                                                                      self.version):
                self._publish()
            self._loop()
        except Exception as exc:
            if not self._stop.is_set():  # an error while stopping is the shutdown's, not ours
                self.error = ErrorInfo.of(exc)
                raise
        finally:
            self._done.set()

    @register(concurrent=True)
    def stop(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Stop the loop after the current update and wait for it."""
        self._stop.set()
        self._done.wait(timeout_s)
        return self.stats()

    @register(concurrent=True)
    def checkpoint(self, progress: dict[str, Any], run: dict[str, Any]) -> int | None:
        """Write a checkpoint (weights, optimizer, counters, the driver's progress); its step.

        None when the run has no directory. Also after a failure: an update that failed (a
        non-finite loss) left the weights and optimizer as they were before it.
        """
        with self._lock:
            if self._run_dir is None:
                return None
            return save_learner(self._run_dir, self.ppo, self.c, progress, run)

    @register(concurrent=True)
    def export_state(self) -> dict[str, Any]:
        """Weights, optimizer state and counters as plain data, for a league checkpoint the
        driver writes (with every player's state and the league's, in one file)."""
        with self._lock:
            return export_learner(self.ppo, self.c)

    @register(concurrent=True)
    def set_batch_fragments(self, n: int) -> None:
        """Fragments per update (the supervisor lowers it while an env worker is replaced)."""
        self._batch = max(1, int(n))

    @register(concurrent=True)
    def stats(self) -> dict[str, Any]:
        """Counters, last losses, the published version and the error (as plain data)."""
        with self._lock:
            return {**vars(self.c), "error": self.error}

    def _loop(self) -> None:
        """The learner's calling loop (see msagent.vocabulary): fresh fragments are gathered
        until a whole batch is there, so stale ones dropped on the way never shrink an update
        nor leave a stale backlog in front of every later batch."""
        pending: list[Any] = []
        while not self._stop.is_set():
            pending += self._fresh(self._sample(self._batch - len(pending)))
            if len(pending) >= self._batch:
                with self._lock:
                    self._learn(pending)
                pending = []

    def _sample(self, n: int) -> list[Any]:
        """Up to ``n`` fragments, or none when the buffer had none in time."""
        try:
            items = Solver().retrieve("ReplayBufferService", "sample", self.s.table,
                                      max(n, 1), SAMPLE_WAIT_S)
        except RateLimitTimeout:
            return []
        return [item.item for item in items]

    def _fresh(self, fragments: list[Any]) -> list[Any]:
        """Drop (and count) fragments older than the allowed lag.

        Nothing is published for a drop: a dropped fragment's actor waits for (its version
        + 1) <= ours, which exists already; publishing anyway put us one version ahead of
        actors that had moved on, so that every later round was dropped too (a livelock).
        """
        fresh = [f for f in fragments if self.version - f.policy.version <= self.s.max_policy_lag]
        self.c.dropped_fragments += len(fragments) - len(fresh)
        return fresh

    def _learn(self, fresh: list[Any]) -> None:
        """Update on a batch of fresh fragments, publish and snapshot."""
        self.c.losses = self.ppo.update(fresh)
        self.c.updates += 1
        self.c.consumed_steps += sum(len(f) for f in fresh)
        if self.c.updates % self.s.publish_every == 0:
            self._publish()
        if self.s.dump_model_every and self.c.updates % self.s.dump_model_every == 0:
            self._snapshot()
        if self._league is not None and self._league.after_update(self.c.updates, self.version):
            self._publish()

    def _publish(self) -> None:
        """Put the current weights on the parameter topic; versions go on after a resume."""
        self.c.version = publish(params_topic(self.s.policy_id), self.ppo.policy.get_weights(),
                                 at_least=self.c.version + 1)

    def _snapshot(self) -> None:
        """Push the current weights to the model pool, keyed at least by the param version."""
        meta = {"updates": self.c.updates, "param_version": self.version}
        Solver().retrieve("ModelPoolService", "push", self.s.policy_id,
                          self.ppo.policy.get_weights(), meta, self.version)
        self.c.snapshots += 1
