"""The learner: samples fragments, updates the algorithm, publishes parameters and snapshots.

The update rule (GAE, PPO) lives in ``msagent.policy.algorithms``; this file only moves data.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from msagent.errors import RateLimitTimeout
from msagent.policy import PPO, PPOConfig
from msagent.rundir import RunDir
from msagent.runtime import Solver, publish, register
from msagent.services.inference import PolicyScripts
from msagent.services.learner_state import LearnerCounters, restore_learner, save_learner
from msagent.services.params import params_topic
from msagent.user_scripts import build_policy

SAMPLE_WAIT_S = 0.25
"""How long one sample call may wait for fragments (it bounds how fast ``stop`` answers)."""


@dataclass
class LearnerSettings:
    """Everything a learner needs besides the services it talks to."""

    scripts: PolicyScripts
    ppo: PPOConfig
    batch_fragments: int
    policy_id: str = "main"
    table: str = "fragments"
    max_policy_lag: int = 0
    publish_every: int = 1
    dump_model_every: int = 10
    checkpoint_every_s: float = 30.0
    run_dir: str | None = None
    resume: bool = False


class Learner:
    """One learner; ``run`` loops until ``stop`` (multi-learner all-reduce comes later)."""

    def __init__(self, settings: LearnerSettings) -> None:
        self.s = settings
        sc = settings.scripts
        self.ppo = PPO(build_policy(sc.env_script, sc.agent_script, sc.env_params, sc.seed),
                       settings.ppo)
        self.c, self.version, self.error = LearnerCounters(), 0, ""
        self._stop, self._lock, self._done = threading.Event(), threading.Lock(), threading.Event()
        self._run_dir = RunDir.open(settings.run_dir) if settings.run_dir else None
        if settings.resume and self._run_dir is not None:
            self.c = restore_learner(self._run_dir, self.ppo) or self.c

    @register(response=False)
    def run(self) -> None:
        """Publish the first parameters, then sample-update-publish until stopped."""
        try:
            self._publish()
            self._loop()
        except Exception as exc:
            if not self._stop.is_set():  # an error while stopping is the shutdown's, not ours
                self.error = f"{type(exc).__name__}: {exc}"
                raise
        finally:
            self._done.set()

    @register(concurrent=True)
    def stop(self, checkpoint: bool = True, timeout_s: float = 30.0) -> dict[str, Any]:
        """Stop the loop after the current update and wait for it; write a final checkpoint."""
        self._stop.set()
        self._done.wait(timeout_s)
        with self._lock:
            if checkpoint:
                self._checkpoint()
            return self._stats()

    @register(concurrent=True)
    def stats(self) -> dict[str, Any]:
        """Counters, last losses and the published version."""
        with self._lock:
            return self._stats()

    def _loop(self) -> None:
        """The learner's calling loop (see msagent.vocabulary)."""
        next_checkpoint = time.monotonic() + self.s.checkpoint_every_s
        while not self._stop.is_set():
            fragments = self._sample()
            if fragments is None:
                continue
            with self._lock:
                self._learn(fragments)
                if self.s.checkpoint_every_s and time.monotonic() >= next_checkpoint:
                    self._checkpoint()
                    next_checkpoint = time.monotonic() + self.s.checkpoint_every_s

    def _sample(self) -> list[Any] | None:
        """One batch of fragments, or None when the buffer had none in time."""
        try:
            items = Solver().retrieve("ReplayBufferService", "sample", self.s.table,
                                      self.s.batch_fragments, SAMPLE_WAIT_S)
        except RateLimitTimeout:
            return None
        return [item.item for item in items]

    def _learn(self, fragments: list[Any]) -> None:
        """Drop fragments older than the allowed lag, update, publish and snapshot."""
        fresh = [f for f in fragments if self.version - f.policy.version <= self.s.max_policy_lag]
        self.c.dropped_fragments += len(fragments) - len(fresh)
        if not fresh:
            # No publish here: a dropped fragment's actor waits for (its version + 1) <= ours,
            # which exists already. Publishing anyway put us one version ahead of actors that
            # had moved on, so that every later round was dropped too (a livelock).
            return
        self.c.losses = self.ppo.update(fresh)
        self.c.updates += 1
        self.c.consumed_steps += sum(len(f) for f in fresh)
        if self.c.updates % self.s.publish_every == 0:
            self._publish()
        if self.s.dump_model_every and self.c.updates % self.s.dump_model_every == 0:
            self._snapshot()

    def _publish(self) -> None:
        """Put the current weights on the parameter topic."""
        self.version = publish(params_topic(self.s.policy_id), self.ppo.policy.get_weights())

    def _snapshot(self) -> None:
        """Push the current weights to the model pool."""
        meta = {"updates": self.c.updates, "param_version": self.version}
        Solver().retrieve("ModelPoolService", "push", self.s.policy_id,
                          self.ppo.policy.get_weights(), meta)
        self.c.snapshots += 1

    def _checkpoint(self) -> None:
        """Write a checkpoint to the run directory, if the run has one."""
        if self._run_dir is not None:
            save_learner(self._run_dir, self.ppo, self.c)

    def _stats(self) -> dict[str, Any]:
        """A plain-dict view of the counters."""
        return {**vars(self.c), "version": self.version, "error": self.error}
