"""Publish/subscribe of versioned values on named topics (learner parameters to actors)."""

from __future__ import annotations

import logging
import threading
from typing import Any

from msagent.runtime import state

log = logging.getLogger("msagent.runtime")


def publish(topic: str, value: Any, at_least: int = 0) -> int:
    """Store ``value`` once under ``topic`` and return its version (1, 2, ...).

    On Ray the value goes to the object store once; every subscriber reads that one copy.
    ``at_least`` lets a resumed publisher continue its versions: the new version is
    ``max(previous + 1, at_least)``.
    """
    if not isinstance(topic, str) or not topic:
        raise ValueError(f"topic must be a non-empty string, got {topic!r}")
    return state.current().publish(topic, value, at_least)


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


class Follower(Subscriber):
    """A subscriber whose background thread keeps the newest version at hand.

    ``latest`` and ``wait_newer`` answer from memory, without a call to the topic table, for
    readers that look at a topic very often (an inference server, on every batch). The thread
    long-polls the topic table and ends with ``close`` or when this process's backend changes.
    """

    def __init__(self, topic: str, values: bool = True, poll_s: float = 1.0) -> None:
        """Start following ``topic`` on this process's backend (``poll_s``: long-poll length)."""
        super().__init__(topic, values)
        self._changed = threading.Condition()
        self._closed = threading.Event()
        self._backend, self._poll_s = state.current(), poll_s
        threading.Thread(target=self._follow, name=f"follow:{topic}", daemon=True).start()

    def latest(self) -> tuple[int, Any]:
        """The newest (version, value) the thread has received (no remote call)."""
        with self._lock:
            return self._version, self._value

    def wait_newer(self, version: int | None = None,
                   timeout_s: float | None = None) -> tuple[int, Any] | None:
        """Block until the thread received a version newer than ``version``; None on timeout.

        Raises:
            RuntimeError: the follower is closed, so no newer version can come.
        """
        floor = self._version if version is None else version
        with self._changed:
            self._changed.wait_for(lambda: self._version > floor or self._closed.is_set(),
                                   timeout_s)
        found = self.latest()
        if found[0] <= floor and self._closed.is_set():
            raise RuntimeError(f"the follower of topic {self.topic!r} is closed")
        return found if found[0] > floor else None

    def close(self) -> None:
        """Stop the background thread (waiters return at once)."""
        self._closed.set()
        with self._changed:
            self._changed.notify_all()

    def _follow(self) -> None:
        """Long-poll the topic table until closed or the backend is gone."""
        while not self._closed.is_set() and state.installed() is self._backend:
            try:
                found = self._backend.topic_wait(self.topic, self._version, self._poll_s,
                                                 self.values)
            except Exception:  # a backend shutting down; anything else is retried
                if self._closed.is_set() or state.installed() is not self._backend:
                    break
                log.warning("following topic %r failed; retrying", self.topic, exc_info=True)
                self._closed.wait(self._poll_s)
                continue
            except BaseException:  # Ray raises SystemExit in waiting threads as it shuts down
                break
            if found is not None:
                self._keep(found)
                with self._changed:
                    self._changed.notify_all()
        self.close()


def subscribe(topic: str, values: bool = True) -> Subscriber:
    """A subscriber to ``topic`` (``values=False``: versions only)."""
    return Subscriber(topic, values)


def follow(topic: str, values: bool = True) -> Follower:
    """A subscriber that follows ``topic`` in a background thread (reads cost no call)."""
    return Follower(topic, values)
