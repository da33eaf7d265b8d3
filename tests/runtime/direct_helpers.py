"""Service classes for the direct-channel and parallel-launch tests (shipped to Ray by value)."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import ray.cloudpickle

from msagent import register

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


class Direct:
    """Direct methods (Unix-socket channel on Ray) beside a plain one, to compare."""

    @register(direct=True)
    def echo(self, value: Any, times: int = 1) -> Any:
        return value * times

    @register(direct=True)
    def pid(self) -> int:
        return os.getpid()

    @register(direct=True)
    def fail(self, message: str) -> None:
        raise KeyError(message)

    @register(direct=True)
    def unpicklable(self) -> Any:
        return threading.Lock()

    @register(direct=True)
    def sleep(self, delay_s: float) -> int:
        time.sleep(delay_s)
        return os.getpid()

    @register(direct=True, concurrent=True)
    def slow_concurrent(self, delay_s: float) -> float:
        time.sleep(delay_s)
        return delay_s

    @register(batch=4, max_wait_ms=100.0, direct=True)
    def predict(self, obs: list[int]) -> list[int]:
        return [o * 10 for o in obs]

    @register
    def plain_pid(self) -> int:
        return os.getpid()


class SlowStart:
    """A service whose constructor takes a while (or fails), for parallel launches."""

    def __init__(self, delay_s: float = 0.0, fail: bool = False) -> None:
        self.built = (time.time(), time.time() + delay_s)  # when the constructor ran
        time.sleep(delay_s)
        if fail:
            raise RuntimeError("constructor failed on purpose")

    @register
    def ping(self) -> str:
        return "pong"

    @register
    def built_during(self) -> tuple[float, float]:
        """(start, end) wall time of the constructor."""
        return self.built


class DiesWhileStarting:
    """A service whose process exits during construction while ``marker`` holds a count > 0
    (a worker lost to the system, not a constructor error); each death takes one off."""

    def __init__(self, marker: str) -> None:
        left = int(open(marker).read())
        if left > 0:
            with open(marker, "w") as out:
                out.write(str(left - 1))
            os._exit(1)

    @register
    def ping(self) -> str:
        return "pong"
