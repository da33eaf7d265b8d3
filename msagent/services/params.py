"""Keeps a local policy copy in step with the parameters a learner publishes on a topic."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from msagent.runtime import follow, subscribe


class Follower(Protocol):
    """What acting needs of a player's policy source: the policy, the version it holds, and
    ways to catch up (``PolicyFollower``; the evaluator's ``SnapshotAverage``)."""

    policy: Any
    version: int

    def refresh(self) -> int:
        """Adopt anything newer, never waiting; the version held."""

    def wait_for(self, min_version: int, stop: threading.Event, poll_s: float = 0.5) -> int:
        """Block until ``min_version`` is held, or ``stop``."""


def params_topic(policy_id: str) -> str:
    """The topic a learner publishes a policy's parameters on."""
    return f"params/{policy_id}"


class PolicyFollower:
    """A policy whose weights follow a topic; ``version`` is the topic version it holds.

    With ``background=True`` a thread receives every publish as it happens, so ``refresh`` and
    ``wait_for`` cost no remote call (for an inference server, which refreshes on every batch).
    Weights are still loaded only in the caller's thread, never under a running ``act``.
    """

    def __init__(self, policy, policy_id: str, background: bool = False) -> None:
        self.policy = policy
        self.policy_id = policy_id
        self.version = 0
        topic = params_topic(policy_id)
        self._sub = follow(topic) if background else subscribe(topic)

    def refresh(self) -> int:
        """Adopt the newest published weights, if newer (async mode); return the version."""
        version, weights = self._sub.latest()
        return self._adopt(version, weights)

    def wait_for(self, min_version: int, stop: threading.Event, poll_s: float = 0.5) -> int:
        """Block until weights of at least ``min_version`` are held (sync mode), or ``stop``."""
        while self.version < min_version and not stop.is_set():
            found = self._sub.wait_newer(self.version, timeout_s=poll_s)
            if found is not None:
                self._adopt(*found)
        return self.version

    def _adopt(self, version: int, weights) -> int:
        """Load weights of a newer version into the policy."""
        if version > self.version and weights is not None:
            self.policy.set_weights(weights)
            self.version = version
        return self.version
