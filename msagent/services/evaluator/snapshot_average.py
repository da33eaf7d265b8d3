"""A policy that holds the mean of a player's newest league snapshots, for the evaluator.

It is a ``Follower`` (``msagent.services.params``), so ``Acting`` plays it in the player's seats;
its version is the newest snapshot in the mean.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from msagent.policy.averaging import mean_weights
from msagent.services.inference import pull_weights
from msagent.services.model_pool import PoolClient
from msagent.vocabulary import ModelKey, Weights


def pool_keys(player: str) -> list[ModelKey]:
    """The model pool's keys of ``player`` (its league snapshots)."""
    return PoolClient.keys(player)


class SnapshotAverage:
    """Follows a player's snapshots in the model pool; holds the mean of the newest ``count``.

    Args:
        policy: The policy whose weights are set to the mean.
        player: The player whose snapshots are averaged.
        count: How many of the newest snapshots to average.
        keys: Lists the player's snapshot keys (the model pool's, by default).
        pull: Loads one snapshot's weights (the model pool's, by default).
    """

    def __init__(self, policy, player: str, count: int,
                 keys: Callable[[str], list[ModelKey]] = pool_keys,
                 pull: Callable[[ModelKey], Weights] = pull_weights) -> None:
        self.policy, self.player, self.count = policy, player, count
        self.version = 0
        self._keys, self._pull = keys, pull
        self._held: dict[ModelKey, Weights] = {}

    def refresh(self) -> int:
        """Average the newest snapshots if a newer one came; return the newest in the mean."""
        newest = sorted(self._keys(self.player), key=lambda k: k.version)[-self.count:]
        if not newest or newest[-1].version <= self.version:
            return self.version
        self._held = {k: self._held[k] if k in self._held else self._pull(k) for k in newest}
        self.policy.set_weights(mean_weights(list(self._held.values())))
        self.version = newest[-1].version
        return self.version

    def wait_for(self, min_version: int, stop: threading.Event, poll_s: float = 0.5) -> int:
        """Block until a snapshot of at least ``min_version`` is in the mean, or ``stop``."""
        while self.refresh() < min_version and not stop.is_set():
            stop.wait(poll_s)
        return self.version
