"""Publish/subscribe of versioned values on named topics (learner parameters to actors)."""

from __future__ import annotations

import threading
from typing import Any

from msagent.runtime import state


def publish(topic: str, value: Any) -> int:
    """Store ``value`` once under ``topic`` and return its version (1, 2, ...).

    On Ray the value goes to the object store once; every subscriber reads that one copy.
    """
    if not isinstance(topic, str) or not topic:
        raise ValueError(f"topic must be a non-empty string, got {topic!r}")
    return state.current().publish(topic, value)


class Subscriber:
    """Reads a topic; the version it reports never goes back, even across threads.

    With ``values=False`` it follows versions only and never moves the values (a caller that
    only needs to know a newer version exists, e.g. an env worker using central inference).
    """

    def __init__(self, topic: str, values: bool = True) -> None:
        self.topic = topic
        self.values = values
        self._lock = threading.Lock()
        self._version = 0
        self._value: Any = None

    @property
    def version(self) -> int:
        """The newest version this subscriber has seen (0: none yet)."""
        return self._version

    def latest(self) -> tuple[int, Any]:
        """The newest (version, value) published; (0, None) before the first publish."""
        found = state.current().topic_latest(self.topic, self._version, self.values)
        return self._keep(found)

    def wait_newer(self, version: int | None = None,
                   timeout_s: float | None = None) -> tuple[int, Any] | None:
        """Block until a version newer than ``version`` (default: the one seen) is published.

        Returns:
            (version, value), or None when ``timeout_s`` passed first.
        """
        floor = self._version if version is None else version
        if self._version > floor:
            return self._version, self._value
        found = state.current().topic_wait(self.topic, floor, timeout_s, self.values)
        return None if found is None else self._keep(found)

    def _keep(self, found: tuple[int, Any] | None) -> tuple[int, Any]:
        """Adopt a newer (version, value); keep ours if it is not newer."""
        with self._lock:
            if found is not None and found[0] > self._version:
                self._version, self._value = found[0], found[1] if self.values else None
            return self._version, self._value


def subscribe(topic: str, values: bool = True) -> Subscriber:
    """A subscriber to ``topic`` (``values=False``: versions only)."""
    return Subscriber(topic, values)
