"""Training metrics gathered from many threads into one consistent snapshot."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

_MARK_SPACING_S = 0.1
"""Step marks closer than this are merged, so the rate window holds ~50 marks at most."""

_GAPS_PER_WINDOW = 3.0
"""The rate window spans at least this many of the usual gaps between step reports: a slow
game's workers report steps in bursts seconds apart, and a fixed 5 s window would read 0
between two bursts."""

_GAP_SMOOTHING = 0.3
"""Weight of the newest gap in the running mean of gaps between step reports."""


class Metrics:
    """Thread-safe counters for progress, TensorBoard and stop criteria.

    Args:
        window: Episodes averaged into ``mean_return`` and ``mean_length``.
        rate_window_s: Seconds over which ``steps_per_s`` is measured, at least (the window
            grows to span three of the usual gaps when steps are reported in slow bursts).
        clock: Monotonic time source (injectable for tests).
    """

    def __init__(
        self, window: int = 20, rate_window_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if window < 1 or rate_window_s <= 0:
            raise ValueError("window must be >= 1 and rate_window_s > 0")
        self.window, self.rate_window_s, self._clock = window, rate_window_s, clock
        self._lock = threading.Lock()
        self._start = clock()
        self._returns: deque[float] = deque(maxlen=window)
        self._lengths: deque[int] = deque(maxlen=window)
        self._marks: deque[tuple[float, int]] = deque([(self._start, 0)])
        self._gap = 0.0
        self._env_steps = self._episodes = self._updates = 0
        self._losses: dict[str, float] = {}
        self._policy_version: int | None = None
        self._counters: dict[str, int] = {}

    def record_episode(self, ret: float, length: int) -> None:
        """Count a finished episode and remember its return and length for the window."""
        with self._lock:
            self._episodes += 1
            self._returns.append(float(ret))
            self._lengths.append(int(length))

    def add_env_steps(self, n: int) -> None:
        """Add ``n`` environment steps (all envs together) to the total and the rate."""
        if n <= 0:  # an empty report (a poll between bursts) is not a step report
            return
        with self._lock:
            self._env_steps += int(n)
            now = self._clock()
            gap = now - self._marks[-1][0]
            self._gap = gap if self._gap == 0.0 else (
                _GAP_SMOOTHING * gap + (1 - _GAP_SMOOTHING) * self._gap)
            if len(self._marks) > 1 and now - self._marks[-2][0] < _MARK_SPACING_S:
                self._marks.pop()
            self._marks.append((now, self._env_steps))

    def record_losses(self, stats: Mapping[str, float], policy_version: int) -> None:
        """Keep the latest update's statistics and the policy version it produced."""
        with self._lock:
            self._losses = {k: float(v) for k, v in stats.items()}
            self._policy_version = int(policy_version)
            self._updates += 1

    def counter(self, name: str, n: int = 1) -> None:
        """Add ``n`` to a named event counter, e.g. ``dropped_stale_fragments``."""
        with self._lock:
            self._counters[name] = self._counters.get(name, 0) + int(n)

    def snapshot(self) -> dict[str, Any]:
        """A consistent copy of everything, for display, TensorBoard and stop checks.

        Returns:
            ``env_steps``, ``steps_per_s``, ``episodes``, ``mean_return`` and ``mean_length``
            (None before the first episode), ``return_window``, ``returns_in_window``,
            ``losses``, ``policy_version`` (None before the first update), ``updates``,
            ``elapsed_s`` and ``counters``.
        """
        with self._lock:
            now = self._clock()
            return {
                "env_steps": self._env_steps,
                "steps_per_s": self._rate(now),
                "episodes": self._episodes,
                "mean_return": _mean(self._returns),
                "mean_length": _mean(self._lengths),
                "return_window": self.window,
                "returns_in_window": len(self._returns),
                "losses": dict(self._losses),
                "policy_version": self._policy_version,
                "updates": self._updates,
                "elapsed_s": now - self._start,
                "counters": dict(self._counters),
            }

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps, so that a resumed run's counters and stop criteria go on."""
        with self._lock:
            return {"env_steps": self._env_steps, "episodes": self._episodes,
                    "updates": self._updates, "elapsed_s": self._clock() - self._start,
                    "returns": list(self._returns), "lengths": list(self._lengths),
                    "counters": dict(self._counters)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state_dict` (the steps/s rate starts afresh, without a jump)."""
        with self._lock:
            self._env_steps = int(state.get("env_steps", 0))
            self._episodes = int(state.get("episodes", 0))
            self._updates = int(state.get("updates", 0))
            self._start = self._clock() - float(state.get("elapsed_s", 0.0))
            self._returns.extend(float(r) for r in state.get("returns", []))
            self._lengths.extend(int(n) for n in state.get("lengths", []))
            self._counters = {k: int(v) for k, v in state.get("counters", {}).items()}
            self._marks = deque([(self._clock(), self._env_steps)])
            self._gap = 0.0

    def _rate(self, now: float) -> float:
        """Steps per second since the last mark at or before the window's start (the window:
        ``rate_window_s``, or three usual gaps between step reports if longer)."""
        cutoff = now - max(self.rate_window_s, _GAPS_PER_WINDOW * self._gap)
        while len(self._marks) > 1 and self._marks[1][0] <= cutoff:
            self._marks.popleft()
        t0, steps0 = self._marks[0]
        return (self._env_steps - steps0) / (now - t0) if now > t0 else 0.0


def _mean(values: deque[float] | deque[int]) -> float | None:
    """Mean of the values, None when there are none."""
    return sum(values) / len(values) if values else None
