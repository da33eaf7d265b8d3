"""A league learner's side of the league: after every update it asks ``LeagueService`` whether
to snapshot (a frozen model-pool entry the league then matches against) and whether to reset
(main exploiters after each snapshot, league exploiters sometimes)."""

from __future__ import annotations

import logging
from typing import Any

from msagent.callbacks import HookRunner, SnapshotEvent
from msagent.policy import PPO
from msagent.rundir import RunDir
from msagent.services.inference import pull_weights
from msagent.services.league import LeagueClient
from msagent.services.model_pool import PoolClient
from msagent.vocabulary import ModelKey

log = logging.getLogger("msagent.learner")


class LeagueHooks:
    """Snapshots and resets of one trainable player, as the league orders them."""

    def __init__(self, player: str, ppo: PPO, run_dir: RunDir | None = None,
                 hooks: HookRunner | None = None) -> None:
        self.player, self.ppo, self.run_dir = player, ppo, run_dir
        self.hooks = hooks or HookRunner(None)

    def after_update(self, updates: int, version: int) -> bool:
        """Follow the league's orders after an update; True when the weights were reset."""
        order = LeagueClient.on_update(self.player, updates)
        if not order.snapshot:
            return False
        key = self._snapshot(updates, version)
        order = LeagueClient.add_snapshot(self.player, key, updates)
        self.hooks.fire("on_snapshot", SnapshotEvent(self.player, str(key), updates, frozen=True))
        if order.reset_to is None:
            return False
        self._reset(order.reset_to.key)
        return True

    def _snapshot(self, updates: int, version: int) -> ModelKey:
        """Push the current weights as a frozen snapshot (never pruned by keep_last)."""
        meta: dict[str, Any] = {"updates": updates, "param_version": version, "frozen": True}
        weights = self.ppo.policy.get_weights()
        key = PoolClient.push(self.player, weights, meta, version)
        if self.run_dir is not None:  # an in-memory pool forgets it; a resume pushes it back
            self.run_dir.snapshots.save(key, weights)
        log.info("league snapshot %s", key)
        return key

    def _reset(self, key: ModelKey) -> None:
        """Load the weights of ``key`` and forget the optimizer's moments."""
        self.ppo.policy.set_weights(pull_weights(key))
        self.ppo.reset_optimizer()
        self.ppo.policy.invalidate_cache()
        log.info("player %s reset to %s", self.player, key)
