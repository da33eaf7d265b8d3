"""The env worker (Kaiwu's aisrv): runs K environments, asks for actions, writes fragments."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from msagent.envs.match_collector import MatchCollector
from msagent.errors import RateLimitTimeout
from msagent.runtime import current_instance, register
from msagent.services.env_worker.league_client import (
    group_by_table,
    worker_acting,
    worker_collector,
    worker_plan,
)
from msagent.services.looping import Looping
from msagent.services.replay_buffer import BufferClient
from msagent.vocabulary import PolicyScripts


@dataclass
class WorkerSettings:
    """What an env worker needs: the user's scripts, its envs, and how it gets actions."""

    scripts: PolicyScripts
    num_envs: int
    fragment_len: int
    policy_id: str = "main"
    table: str = "fragments"
    central: bool = False
    sync: bool = True
    generation: int = 0
    """How many times the run was resumed: part of every worker's seed."""
    league: LeagueSeats | None = None
    """League mode: the trainable players, their tables and the bots (None: one policy)."""
    restart_failed_envs: bool = True
    """A game whose env raises is broken off and its env rebuilt (else the worker fails)."""
    round_fragments: int = 0
    """Sync: fragments the worker ships before it waits for the next version (its share of the
    learner's batch: one per env slot and seat the policy plays); 0: any."""
    max_policy_lag: int = 0
    """Sync: the learner's allowed lag (fragments older are not counted toward the share)."""
    table_room: dict[str, int] = field(default_factory=dict)
    """Async: table -> fragments it may hold before the worker waits to ship more to it
    (back-pressure from a learner that cannot keep up); absent or 0: never wait."""
    rate_limited: tuple[str, ...] = ()
    """Tables with a samples-per-insert ratio: the worker waits for its rate limiter to let
    each fragment in (a replay learner's pace sets the actors'), instead of piling them up."""


@dataclass
class LeagueSeats:
    """What a league env worker needs beyond the single-policy settings.

    Attributes:
        tables: Trainable player -> the buffer table its learner samples.
        bots: Bot name -> bot script path.
        cache_size: Frozen snapshots kept in the worker's LRU cache (local inference).
        prefetch: Games' matches fetched from the league per call, per home player.
        repeat: Consecutive games each drawn match is played (seats alternating).
        shares: Player -> its share of the env slots (default 1 each).
        frozen_greedy: Frozen snapshots take their most likely action (PSRO's greedy members).
    """

    tables: dict[str, str]
    bots: dict[str, str] = field(default_factory=dict)
    cache_size: int = 8
    prefetch: int = 16
    repeat: int = 1
    shares: dict[str, int] = field(default_factory=dict)
    frozen_greedy: bool = False


SEED_STRIDE_INSTANCE = 1000
ROOM_WAIT_S = 0.5
"""Longest single wait for room in a table (the worker then checks whether it must stop)."""
SEED_STRIDE_GENERATION = 1_000_000


def worker_seed(run_seed: int, index: int, generation: int) -> int:
    """A worker's seed: distinct per instance index (a replacement gets a new index) and per
    resume, so no worker repeats the episodes of another, of its predecessor or of the run
    before a resume."""
    return run_seed + SEED_STRIDE_INSTANCE * (index + 1) + SEED_STRIDE_GENERATION * generation


class EnvWorker(Looping):
    """Plays K games with one request per policy per step; ships fragments every T steps.

    A single-policy run is the one-seat case of a league run: every game is the match
    "``policy_id`` in seat 0", and the same ``MatchCollector`` loop plays it. ``run`` loops
    until ``stop``; in sync mode, after each round of fragments it waits for the learner's next
    parameter version, so every fragment is acted by the newest policy.
    """

    def __init__(self, settings: WorkerSettings) -> None:
        super().__init__()
        self.s = settings
        self.service, self.index = current_instance()
        self.seed = worker_seed(settings.scripts.seed, self.index, settings.generation)
        self._episodes: list[tuple[float, int]] = []
        self._env_errors: list[str] = []
        self._steps, self._version = 0, 0
        self._shipped = 0  # sync: fragments the learner will take, shipped since the last wait
        self._first_step: float | None = None
        self.label = f"worker {self.service}#{self.index}"
        self.plan = worker_plan(settings, self.index)
        self._acting = worker_acting(settings, self.plan, self.seed)  # builds the policies
        self._acting.stop = self._stop

    @register(concurrent=True)
    def drain(self) -> dict[str, Any]:
        """Episodes finished, env steps taken and env errors (games broken off) since the
        last drain.

        ``first_step_time`` is the wall time (epoch seconds) of this worker's first env step,
        None before it: start-up time is measured up to it.
        """
        with self._lock:
            out = {"episodes": self._episodes, "env_steps": self._steps, "error": self.error,
                   "version": self._version, "first_step_time": self._first_step,
                   "env_errors": self._env_errors}
            self._episodes, self._steps, self._env_errors = [], 0, []
        return out

    def _loop(self) -> None:
        """Wait for the first parameters; then play, ship, report and (sync mode) wait."""
        for player in self.plan.tables:
            self._acting.wait_for(player, 1)
        collector = worker_collector(self.s, self.plan, self._acting, self.seed, self.label)
        self._first_step = time.time()  # the first actions are decided: stepping starts
        try:
            while not self._stop.is_set():
                fragments = collector.collect()
                for table, shipped in group_by_table(fragments, self.plan.tables).items():
                    self._await_room(table)
                    self._ship(table, shipped)
                self._account(collector.take_results(), collector)
                self._next_version(fragments, collector)
        finally:
            for slot in collector.slots:
                slot.env.close()

    def _ship(self, table: str, fragments: list[Any]) -> None:
        """Insert without waiting, or, into a ratio-limited table, one fragment at a time as
        its limiter allows (checking for stop between waits)."""
        if table not in self.s.rate_limited:
            BufferClient.insert(table, fragments)
            return
        for fragment in fragments:
            while not self._stop.is_set():
                try:
                    BufferClient.insert_wait(table, [fragment], ROOM_WAIT_S)
                    break
                except RateLimitTimeout:
                    continue

    def _await_room(self, table: str) -> None:
        """Async: wait while the table already holds what its learner will take in the next
        few updates; what it ships then is not dropped as stale."""
        limit = self.s.table_room.get(table, 0)
        while limit and not self._stop.is_set() and not BufferClient.await_room(
                table, limit, ROOM_WAIT_S):
            pass

    def _account(self, results: list[Any], collector: MatchCollector) -> None:
        """Report finished games to the league and count episodes and steps for the driver."""
        self.plan.matches.report(results)
        with self._lock:
            self._episodes.extend((r.episode_return, r.length) for r in results)
            self._steps += self.s.num_envs * self.s.fragment_len
            self._env_errors += collector.take_env_errors()

    def _next_version(self, fragments: list[Any], collector: MatchCollector) -> None:
        """Sync: once this worker's share of the batch is shipped, wait for the version after
        the one acting, and re-decide with it. Async: pick up whatever is newest, never
        waiting.

        A one-seat game's fragments end with each round, so one version acted each. A seat of
        a multi-seat game may be mid-fragment at a wait: its fragment is labelled with the
        version it began with, older than the one acting. Only fragments the learner will
        still take (within ``max_policy_lag``) count toward the share, so a batch's worth of
        them is always there when every worker waits."""
        if self.s.sync and fragments:
            acting = self._acting.versions[self.s.policy_id]
            self._shipped += sum(acting - f.newest_version() <= self.s.max_policy_lag
                                 for f in fragments)
            if self._shipped < self.s.round_fragments:  # the batch needs more of ours
                return
            self._shipped = 0
            if self._acting.wait_for(self.s.policy_id, acting + 1) != acting:
                collector.act_again()
        else:
            self._acting.refresh()
        self._version = min(self._acting.versions.values())
