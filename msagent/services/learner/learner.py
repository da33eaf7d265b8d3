"""The learner: samples fragments, updates the algorithm, publishes parameters and snapshots.

The update rule (GAE, PPO) lives in ``msagent.policy.algorithms``; this file only moves data.
Checkpoints are asked for by the driver (``checkpoint``), which adds its own progress to them.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from msagent.callbacks import CallbackSettings, HookRunner, SnapshotEvent, UpdateEvent
from msagent.errors import ErrorInfo, RateLimitTimeout
from msagent.policy import PPOConfig
from msagent.policy.algorithms.impala import ALGORITHMS
from msagent.policy.algorithms.user import make_user_algorithm
from msagent.policy.devices import device_name, resolve_device
from msagent.rundir import RunDir
from msagent.runtime import current_instance, publish, register
from msagent.services.learner.group import (
    LearnerGroupError,
    join_group,
    leave_group,
    rendezvous_topic,
)
from msagent.services.learner.league_hooks import LeagueHooks
from msagent.services.learner.publish import Publisher, PublishSettings
from msagent.services.learner.state import (
    LearnerCounters,
    export_learner,
    restore_learner,
    save_learner,
)
from msagent.services.model_pool import PoolClient
from msagent.services.params import params_topic
from msagent.services.replay_buffer import BufferClient
from msagent.user_scripts import build_policy
from msagent.vocabulary import PolicyScripts

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
    """League mode: snapshots and resets as ``LeagueService`` orders (see league_hooks)."""
    group_size: int = 1
    """Learners of this player; above 1 they form one data-parallel group (group.py)."""
    run_id: str = ""
    generation: int = 0
    collective_timeout_s: float = 120.0
    """How long a group member waits in a collective for its peers before it fails."""
    algorithm: str = "ppo"
    """``ppo``, ``impala`` or ``bc`` (msagent.policy.algorithms.impala.ALGORITHMS)."""
    publish: PublishSettings | None = None
    """Publish the acting policy as ONNX for game clients (rank 0; None: never)."""
    take_buffered: bool = False
    """Once a batch is in, also take every fragment already buffered (a sync run of a
    multi-seat game: its workers may ship more than their share of one version)."""
    initial_weights: dict[str, Any] | None = None
    """Weights to start from instead of a fresh network (checked by the driver; a resume's
    checkpoint wins)."""
    device: str = "cpu"
    """Where the policy trains (``services.learner.device``: cpu, cuda, cuda:N or auto)."""
    algorithm_script: str | None = None
    """A user's algorithm script (``[algorithm] script``; replaces ``algorithm``)."""
    algorithm_settings: dict[str, Any] = field(default_factory=dict)
    """Its ``[algorithm.settings]`` table, validated by the script's ``Settings``."""
    callbacks: CallbackSettings | None = None
    """The user's hooks (``[callbacks]``): rank 0 runs ``on_update`` and ``on_snapshot``."""


class Learner:
    """One learner, or one rank of a player's learner group; ``run`` loops until ``stop``.

    In a group every rank samples its share of the batch and updates on it with gradients
    averaged over the group, so all ranks hold the same weights; rank 0 alone publishes
    parameters, pushes snapshots, follows the league and writes checkpoints.
    """

    def __init__(self, settings: LearnerSettings) -> None:
        self.s = settings
        sc = settings.scripts
        policy = build_policy(sc.env_script, sc.agent_for(settings.policy_id), sc.env_params,
                              sc.seed)
        device = resolve_device(settings.device)
        self.ppo = build_algorithm(settings, policy.to(device))
        if device.type != "cpu":
            logging.getLogger("msagent.learner").info(
                "learner %s trains on %s", settings.policy_id, device_name(device))
        self.c, self.error = LearnerCounters(), None
        self.rank = current_instance()[1] if settings.group_size > 1 else 0
        self.hooks = HookRunner(settings.callbacks if self.rank == 0 else None)
        self._batch = share(settings.batch_fragments, settings.group_size)
        self._stop, self._lock, self._done = threading.Event(), threading.Lock(), threading.Event()
        self._run_dir = RunDir.open(settings.run_dir) if settings.run_dir else None
        if settings.resume_step is not None and self._run_dir is not None:
            self.c = restore_learner(self._run_dir, self.ppo, settings.resume_step,
                                     settings.policy_id if settings.league else None).counters
        elif settings.initial_weights is not None:
            self.ppo.policy.set_weights(settings.initial_weights)
            self.ppo.policy.invalidate_cache()
        self._league = (LeagueHooks(settings.policy_id, self.ppo, self._run_dir, self.hooks)
                        if settings.league and self.rank == 0 else None)
        self._publisher = (Publisher(settings.publish, settings.run_dir, settings.policy_id,
                                     settings.scripts)
                           if settings.publish is not None and self.rank == 0 else None)
        if settings.group_size > 1:
            self._join_group()

    def _join_group(self) -> None:
        """Form the group, then start from rank 0's weights (a resume restored them all)."""
        s = self.s
        cuda = any(p.is_cuda for p in self.ppo.policy.model.parameters())
        self.ppo.collective = join_group(rendezvous_topic(s.run_id, s.policy_id), self.rank,
                                         s.group_size, s.generation, s.collective_timeout_s,
                                         cuda)
        self.ppo.collective.broadcast(list(self.ppo.policy.model.parameters()))
        self.ppo.policy.invalidate_cache()

    @property
    def version(self) -> int:
        """The newest parameter version published."""
        return self.c.version

    @register(response=False)
    def run(self) -> None:
        """Publish the first parameters, then sample-update-publish until stopped."""
        try:
            self._publish()
            if self._follow_league():
                self._publish()
            if self._publisher is not None:  # clients get a model before any update
                self._publisher.publish(self.ppo.policy, self.version)
            self._loop()
            if self._publisher is not None:  # and the final one, however the loop ended
                self._publisher.publish(self.ppo.policy, self.version)
        except Exception as exc:
            if not self._stop.is_set():  # an error while stopping is the shutdown's, not ours
                self.error = ErrorInfo.of(self._named(exc))
                raise
        finally:
            if self.s.group_size > 1:
                leave_group()
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
            if self._run_dir is None or self.rank != 0:  # the ranks hold the same state
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
        """Fragments per update (the supervisor lowers it while an env worker is replaced);
        a group member takes its share."""
        self._batch = share(int(n), self.s.group_size)

    @register(concurrent=True)
    def stats(self) -> dict[str, Any]:
        """Counters, last losses, the published version, the error, the fragments per
        update and the user hooks' scalars and failures since the last call (as plain data)."""
        with self._lock:
            return {**vars(self.c), "error": self.error, "rank": self.rank,
                    "batch_fragments": self._batch, "user": self.hooks.drain()}

    def _loop(self) -> None:
        """The learner's calling loop (see msagent.vocabulary): fresh fragments are gathered
        until a whole batch is there, so stale ones dropped on the way never shrink an update
        nor leave a stale backlog in front of every later batch."""
        pending: list[Any] = []
        while not self._stop.is_set():
            pending += self._fresh(self._sample(self._batch - len(pending)))
            if len(pending) >= self._batch:
                if self.s.take_buffered:
                    pending += self._fresh(self._buffered())
                if self.ppo.collective.any(self._stop.is_set()):  # a peer is stopping
                    return
                with self._lock:
                    self._learn(pending)
                pending = []
        self.ppo.collective.any(True)  # tell the peers waiting at their next batch

    def _sample(self, n: int) -> list[Any]:
        """Up to ``n`` fragments, or none when the buffer had none in time."""
        try:
            items = BufferClient.sample(self.s.table, max(n, 1), SAMPLE_WAIT_S)
        except RateLimitTimeout:
            return []
        return [item.item for item in items]

    def _buffered(self) -> list[Any]:
        """Every fragment in the table now, never waiting."""
        size = BufferClient.size(self.s.table)
        if size == 0:
            return []
        try:
            items = BufferClient.sample(self.s.table, size, 0.0)
        except RateLimitTimeout:
            return []
        return [item.item for item in items]

    def _fresh(self, fragments: list[Any]) -> list[Any]:
        """Drop (and count) fragments older than the allowed lag, measured from their newest
        step (``Fragment.latest_version``: a seat that decides less often must not lose more
        of its fragments; each step's own log-probability corrects for its version).

        Nothing is published for a drop: a dropped fragment's actor waits for (its version
        + 1) <= ours, which exists already; publishing anyway put us one version ahead of
        actors that had moved on, so that every later round was dropped too (a livelock).
        """
        fresh = [f for f in fragments if self.version - f.newest_version() <= self.s.max_policy_lag]
        self.c.dropped_fragments += len(fragments) - len(fresh)
        return fresh

    def _learn(self, fresh: list[Any]) -> None:
        """Update on a batch of fresh fragments, publish and snapshot."""
        self.c.losses = self.ppo.update(fresh)
        self.c.updates += 1
        self.c.consumed_steps += sum(len(f) for f in fresh)
        if self.c.updates % self.s.publish_every == 0:
            self._publish()
        if self.s.dump_model_every and self.c.updates % self.s.dump_model_every == 0 and \
                self.rank == 0:
            self._snapshot()
        if self._follow_league():
            self._publish()
        self.hooks.fire("on_update", UpdateEvent(self.s.policy_id, self.c.updates, self.version,
                                                 dict(self.c.losses)))

    def _follow_league(self) -> bool:
        """Rank 0 follows the league's orders; a reset reaches every rank of a group."""
        reset = self._league is not None and self._league.after_update(self.c.updates,
                                                                       self.version)
        if self.s.group_size > 1 and self.s.league and self.ppo.collective.any(reset):
            self.ppo.collective.broadcast(list(self.ppo.policy.model.parameters()))
            self.ppo.reset_optimizer()
            self.ppo.policy.invalidate_cache()
            return True
        return reset

    def _publish(self) -> None:
        """Put the current weights on the parameter topic; versions go on after a resume.
        Other ranks of a group count the version rank 0 publishes, without publishing."""
        if self.rank != 0:
            self.c.version += 1
            return
        self.c.version = publish(params_topic(self.s.policy_id), self.ppo.policy.get_weights(),
                                 at_least=self.c.version + 1)

    def _named(self, exc: Exception) -> Exception:
        """A collective that failed because a peer died, said as such."""
        if self.s.group_size > 1 and "gloo" in f"{type(exc).__module__}{exc}".lower():
            return LearnerGroupError(f"learner rank {self.rank} of player {self.s.policy_id!r}: "
                                     f"a peer of its group stopped answering ({exc})")
        return exc

    def _snapshot(self) -> None:
        """Push the current weights to the model pool, keyed at least by the param version."""
        meta = {"updates": self.c.updates, "param_version": self.version}
        key = PoolClient.push(self.s.policy_id, self.ppo.policy.get_weights(), meta, self.version)
        self.c.snapshots += 1
        self.hooks.fire("on_snapshot", SnapshotEvent(self.s.policy_id, str(key), self.c.updates))
        if self._publisher is not None:
            self._publisher.after_snapshot(self.ppo.policy, self.c.snapshots, self.version)


def share(batch: int, group_size: int) -> int:
    """One rank's share of a batch of fragments (at least one)."""
    return max(1, -(-int(batch) // max(group_size, 1)))


def build_algorithm(settings: LearnerSettings, policy: Any) -> Any:
    """The player's algorithm: a built-in one by name, or the user's script's."""
    if settings.algorithm_script is not None:
        return make_user_algorithm(settings.algorithm_script, settings.algorithm_settings, policy)
    return ALGORITHMS[settings.algorithm](policy, settings.ppo)
