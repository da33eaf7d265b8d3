"""The env worker (Kaiwu's aisrv): runs K environments, asks for actions, writes fragments."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from msagent.errors import ErrorInfo, InstanceDiedError, ServiceNotFoundError
from msagent.envs import Acted, FragmentCollector, make_vector_env
from msagent.runtime import Solver, current_instance, register, subscribe
from msagent.services.inference import PolicyScripts, PredictRequest
from msagent.services.acting import Acting
from msagent.services.league_client import group_by_table, league_collector
from msagent.services.params import PolicyFollower, params_topic
from msagent.user_scripts import build_policy, env_factory
from msagent.vocabulary import ModelKey



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


@dataclass
class LeagueSeats:
    """What a league env worker needs beyond the single-policy settings.

    Attributes:
        tables: Trainable player -> the buffer table its learner samples.
        bots: Bot name -> bot script path.
        cache_size: Frozen snapshots kept in the worker's LRU cache (local inference).
        prefetch: Games' matches fetched from the league per call, per home player.
        repeat: Consecutive games each drawn match is played (seats alternating).
    """

    tables: dict[str, str]
    bots: dict[str, str] = field(default_factory=dict)
    cache_size: int = 8
    prefetch: int = 16
    repeat: int = 1


INFERENCE_WAIT_S = 60.0
"""How long an env worker waits for a (replaced) inference server before it fails."""
SEED_STRIDE_INSTANCE = 1000
SEED_STRIDE_GENERATION = 1_000_000


def worker_seed(run_seed: int, index: int, generation: int) -> int:
    """A worker's seed: distinct per instance index (a replacement gets a new index) and per
    resume, so no worker repeats the episodes of another, of its predecessor or of the run
    before a resume."""
    return run_seed + SEED_STRIDE_INSTANCE * (index + 1) + SEED_STRIDE_GENERATION * generation


class EnvWorker:
    """Acts in K envs with one request per step; ships K fragments every T steps.

    ``run`` loops until ``stop``; in sync mode, after each round of fragments it waits for the
    learner's next parameter version, so every fragment is acted by the newest policy.
    """

    def __init__(self, settings: WorkerSettings) -> None:
        self.s = settings
        self.service, self.index = current_instance()
        self.seed = worker_seed(settings.scripts.seed, self.index, settings.generation)
        self._stop, self._lock = threading.Event(), threading.Lock()
        self._done = threading.Event()
        self._episodes: list[tuple[float, int]] = []
        self._steps, self._version = 0, 0
        self._first_step: float | None = None
        self.error: ErrorInfo | None = None
        self._acting: Acting | None = None
        if settings.league is not None:
            pass  # the league loop builds its own acting (players, snapshots, bots)
        elif settings.central:
            self._sub = subscribe(params_topic(settings.policy_id), values=False)
        else:
            sc = settings.scripts
            policy = build_policy(sc.env_script, sc.agent_script, sc.env_params, self.seed)
            self._follower = PolicyFollower(policy, settings.policy_id)

    @register(response=False)
    def run(self) -> None:
        """Act until stopped (a crash is kept in ``error`` and reported by ``drain``)."""
        try:
            self._loop()
        except Exception as exc:
            if not self._stop.is_set():
                self.error = ErrorInfo.of(exc)
                raise
        finally:
            self._done.set()

    @register(concurrent=True)
    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop ``run`` after its current fragment; True once it has ended."""
        self._stop.set()
        if self._acting is not None:
            self._acting.stop.set()
        return self._done.wait(timeout_s)

    @register(concurrent=True)
    def drain(self) -> dict[str, Any]:
        """Episodes finished and env steps taken since the last drain.

        ``first_step_time`` is the wall time (epoch seconds) of this worker's first env step,
        None before it: start-up time is measured up to it.
        """
        with self._lock:
            out = {"episodes": self._episodes, "env_steps": self._steps, "error": self.error,
                   "version": self._version, "first_step_time": self._first_step}
            self._episodes, self._steps = [], 0
        return out

    def _loop(self) -> None:
        """Wait for the first parameters, then collect, ship and (in sync mode) wait."""
        if self.s.league is not None:
            return self._league_loop(self.s.league)
        sc = self.s.scripts
        envs = make_vector_env(env_factory(sc.env_script, sc.env_params), self.s.num_envs)
        self._await_version(1)
        collector = FragmentCollector(envs, self._act, self.s.fragment_len, self.seed,
                                      env_label=f"worker {self.service}#{self.index}")
        self._first_step = time.time()  # the first actions are decided: stepping starts
        while not self._stop.is_set():
            fragments = collector.collect()
            Solver().retrieve("ReplayBufferService", "insert", self.s.table, fragments)
            with self._lock:
                self._episodes.extend(collector.take_episodes())
                self._steps += self.s.num_envs * self.s.fragment_len
            acted = min(f.policy.version for f in fragments)
            self._await_version(acted + 1) if self.s.sync else self._refresh()
            if self._version != acted:
                collector.act_again()
        envs.close()

    def _league_loop(self, league: LeagueSeats) -> None:
        """Play the league's matches; ship each player's fragments to its table; report games."""
        acting, collector, matches = league_collector(self.s, league, self.index, self.seed)
        self._acting = acting
        self._first_step = time.time()
        try:
            while not self._stop.is_set():
                by_table = group_by_table(collector.collect(), league.tables)
                for table, fragments in by_table.items():
                    Solver().retrieve("ReplayBufferService", "insert", table, fragments)
                results = collector.take_results()
                matches.report(results)
                with self._lock:
                    self._episodes.extend((r.episode_return, r.length) for r in results)
                    self._steps += self.s.num_envs * self.s.fragment_len
                acting.refresh()
                self._version = min(acting.versions.values())
        finally:
            for slot in collector.slots:
                slot.env.close()

    def _act(self, obs: np.ndarray) -> Acted:
        """Actions for a batch of observations, locally or from the inference service."""
        if not self.s.central:
            return Acted(self._follower.policy.act(obs), self._key())
        request = PredictRequest(obs, self.s.policy_id, min_version=self._version)
        deadline = time.monotonic() + INFERENCE_WAIT_S
        while True:
            try:
                return Solver().retrieve("InferenceServer", "predict", request)
            except (InstanceDiedError, ServiceNotFoundError):
                # the server died: the supervisor starts a replacement; wait for it
                if time.monotonic() > deadline or self._stop.is_set():
                    raise
                time.sleep(0.2)

    def _await_version(self, version: int) -> None:
        """Block until parameters of at least ``version`` exist (or stop)."""
        if self.s.central:
            while self._version < version and not self._stop.is_set():
                found = self._sub.wait_newer(self._version, timeout_s=0.5)
                self._version = found[0] if found else self._version
        else:
            self._version = self._follower.wait_for(version, self._stop)

    def _refresh(self) -> None:
        """Async mode: pick up the newest parameters, never wait."""
        if self.s.central:
            self._version = max(self._version, self._sub.latest()[0])
        else:
            self._version = self._follower.refresh()

    def _key(self) -> ModelKey:
        """The key of the local policy copy."""
        return ModelKey(self.s.policy_id, self._follower.version)
