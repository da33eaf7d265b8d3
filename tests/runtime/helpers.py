"""Service classes used by the runtime tests (shipped to Ray workers by value)."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import ray.cloudpickle

from msagent import Solver, register

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Worker:
    """The seed's Worker, plus methods that exercise each kind of registration."""

    def __init__(self, k: int = 1) -> None:
        self.k = k
        self.added: list[Any] = []

    @register(response=True)
    def func(self, *args: Any, **kwargs: Any) -> Any:
        return {"args": list(args), "kwargs": kwargs, "k": self.k}

    @register
    def pid(self) -> int:
        return os.getpid()

    @register
    def fail(self, message: str) -> None:
        raise ValueError(message)

    @register(response=False)
    def slow_add(self, value: Any, delay_s: float) -> None:
        time.sleep(delay_s)
        self.added.append(value)

    @register
    def added_values(self) -> list[Any]:
        return list(self.added)

    @register
    def sleep(self, delay_s: float) -> int:
        time.sleep(delay_s)
        return os.getpid()

    @register(idempotent=True)
    def sleep_idempotent(self, delay_s: float) -> int:
        time.sleep(delay_s)
        return os.getpid()


class Batched:
    """A batched method that returns each caller's input times ten."""

    @register(batch=8, max_wait_ms=20)
    def predict(self, obs: list[int]) -> list[int]:
        return [o * 10 for o in obs]

    @register(batch=4, max_wait_ms=50)
    def wrong_length(self, obs: list[int]) -> list[int]:
        return obs[:-1]

    @register(batch=2, max_wait_ms=200)
    def lone(self, obs: list[int]) -> list[int]:
        return obs

    @register
    def ping(self) -> str:
        return "pong"


class Caller:
    """A service that calls another service through the Solver (discovery from a process)."""

    @register
    def call_worker(self, target: Any, value: int) -> Any:
        return Solver().retrieve(target, "func", value)


class Counter:
    """Counts calls under the instance lock; checks that plain calls never overlap."""

    def __init__(self) -> None:
        self.active = 0
        self.overlaps = 0
        self._guard = threading.Lock()

    @register
    def tick(self) -> int:
        with self._guard:
            self.active += 1
            if self.active > 1:
                self.overlaps += 1
        time.sleep(0.002)
        with self._guard:
            self.active -= 1
        return self.overlaps


class Indexed:
    """Remembers which instance it is (from its constructor)."""

    def __init__(self) -> None:
        from msagent.runtime import current_instance

        self.service, self.index = current_instance()

    @register
    def whoami(self) -> tuple[str, int]:
        return self.service, self.index
