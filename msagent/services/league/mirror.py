"""A copy of the league's state in Redis, when the run's model pool lives there.

Checkpoints stay the league's durable record (they are consistent with the learners); the
mirror lets other processes read the live league (a dashboard, game clients) under
``msagent:league:<run id>`` without asking the service. Plain JSON: nothing is pickled.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from msagent.credentials import expand

log = logging.getLogger("msagent.league")
PREFIX = "msagent:league"
MIRROR_EVERY_S = 10.0


def league_key(namespace: str) -> str:
    """The Redis key of a run's league state."""
    return f"{PREFIX}:{namespace}" if namespace else PREFIX


class LeagueMirror:
    """Writes the league's state to Redis at most every ``every_s`` seconds (or when told)."""

    def __init__(self, url: str, namespace: str, every_s: float = MIRROR_EVERY_S) -> None:
        import redis

        self.client = redis.Redis.from_url(expand(url))  # ConfigError: a secret is missing
        self.key, self.every_s = league_key(namespace), every_s
        self._next = 0.0

    def maybe_write(self, state: Callable[[], dict[str, Any]]) -> None:
        """Write ``state()`` if the last write is older than ``every_s``."""
        if time.monotonic() >= self._next:
            self.write(state())

    def write(self, state: dict[str, Any]) -> None:
        """Write the state now; a Redis failure is logged, never raised (training goes on)."""
        self._next = time.monotonic() + self.every_s
        try:
            self.client.set(self.key, json.dumps(state))
        except Exception as exc:  # noqa: BLE001 - the mirror must not stop the league
            log.warning("could not mirror the league state to Redis: %s", exc)


def read_league(url: str, namespace: str) -> dict[str, Any] | None:
    """The mirrored league state of run ``namespace``, or None when there is none."""
    import redis

    raw = redis.Redis.from_url(expand(url)).get(league_key(namespace))
    return None if raw is None else json.loads(raw)
