"""The env worker (Kaiwu's aisrv): runs K environments, asks for actions, writes fragments."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from msagent.envs import Acted, FragmentCollector, make_vector_env
from msagent.runtime import Solver, current_instance, register, subscribe
from msagent.services.inference import PolicyScripts, PredictRequest
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


class EnvWorker:
    """Acts in K envs with one request per step; ships K fragments every T steps.

    ``run`` loops until ``stop``; in sync mode, after each round of fragments it waits for the
    learner's next parameter version, so every fragment is acted by the newest policy.
    """

    def __init__(self, settings: WorkerSettings) -> None:
        self.s = settings
        self.index = current_instance()[1]
        self.seed = settings.scripts.seed + 1000 * (self.index + 1)
        self._stop, self._lock = threading.Event(), threading.Lock()
        self._done = threading.Event()
        self._episodes: list[tuple[float, int]] = []
        self._steps, self._version, self.error = 0, 0, ""
        if settings.central:
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
                self.error = f"{type(exc).__name__}: {exc}"
                raise
        finally:
            self._done.set()

    @register(concurrent=True)
    def stop(self, timeout_s: float = 30.0) -> bool:
        """Stop ``run`` after its current fragment; True once it has ended."""
        self._stop.set()
        return self._done.wait(timeout_s)

    @register(concurrent=True)
    def drain(self) -> dict[str, Any]:
        """Episodes finished and env steps taken since the last drain."""
        with self._lock:
            out = {"episodes": self._episodes, "env_steps": self._steps, "error": self.error,
                   "version": self._version}
            self._episodes, self._steps = [], 0
        return out

    def _loop(self) -> None:
        """Wait for the first parameters, then collect, ship and (in sync mode) wait."""
        self._await_version(1)
        sc = self.s.scripts
        envs = make_vector_env(env_factory(sc.env_script, sc.env_params), self.s.num_envs)
        collector = FragmentCollector(envs, self._act, self.s.fragment_len, self.seed)
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

    def _act(self, obs: np.ndarray) -> Acted:
        """Actions for a batch of observations, locally or from the inference service."""
        if not self.s.central:
            return Acted(self._follower.policy.act(obs), self._key())
        request = PredictRequest(obs, self.s.policy_id, min_version=self._version)
        return Solver().retrieve("InferenceServer", "predict", request)

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
