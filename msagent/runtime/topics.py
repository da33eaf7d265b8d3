"""A thread-safe table of versioned topic values (the inline backend's pub/sub store)."""

from __future__ import annotations

import threading
from typing import Any


class TopicTable:
    """Holds the newest (version, value) of each topic; waiters wake on publish."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._topics: dict[str, tuple[int, Any]] = {}

    def publish(self, topic: str, value: Any, at_least: int = 0) -> int:
        """Store a new value and return its version (at least ``at_least``)."""
        with self._cond:
            version = max(self._topics.get(topic, (0, None))[0] + 1, at_least)
            self._topics[topic] = (version, value)
            self._cond.notify_all()
            return version

    def latest(self, topic: str, known_version: int) -> tuple[int, Any] | None:
        """The newest entry if newer than ``known_version``."""
        with self._cond:
            entry = self._topics.get(topic)
        return entry if entry is not None and entry[0] > known_version else None

    def wait_newer(self, topic: str, version: int, timeout_s: float | None) -> tuple[int, Any] | None:
        """Block until a version newer than ``version`` exists; None on timeout."""
        with self._cond:
            newer = self._cond.wait_for(
                lambda: self._topics.get(topic, (0, None))[0] > version, timeout_s)
            return self._topics[topic] if newer else None

    def forget(self) -> int:
        """Drop every topic (the backend is reused by another run); how many there were."""
        with self._cond:
            count = len(self._topics)
            self._topics.clear()
            return count
