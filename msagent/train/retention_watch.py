"""The league's snapshot retention while a run trains: every ``[league.retention] every_s``
the league retires the snapshots no rule keeps, and the weights of those retired at least
``grace_s`` ago are deleted from the run directory and the model pool (their database rows
are marked, never deleted)."""

from __future__ import annotations

import logging
import time

from msagent.config import TrainConfig
from msagent.rundir import RunDir
from msagent.services.league import LeagueService
from msagent.services.model_pool import ModelPoolService
from msagent.train.run_services import Services

log = logging.getLogger(__name__)


class RetentionWatch:
    """Runs the retention passes of one league run."""

    def __init__(self, cfg: TrainConfig, services: Services, run_dir: RunDir | None) -> None:
        self.rules = cfg.league.retention.rules()
        self.every_s = cfg.league.retention.every_s
        self.services, self.run_dir = services, run_dir
        self._next = time.monotonic() + self.every_s
        self.deleted = 0

    @classmethod
    def for_run(cls, cfg: TrainConfig, services: Services,
                run_dir: RunDir | None) -> RetentionWatch | None:
        """The watch, or None (``every_s = 0``, or not a league run)."""
        if services.league is None or cfg.league is None or cfg.league.retention.every_s <= 0:
            return None
        return cls(cfg, services, run_dir)

    def poll(self) -> None:
        """One pass when due: retire, then delete the weights whose grace is over."""
        if time.monotonic() < self._next:
            return
        self._next = time.monotonic() + self.every_s
        league = self.services.league
        assert league is not None
        due = next(iter(league.call_each(LeagueService.retire, self.rules).values()), [])
        if not due:
            return
        self.services.model_pool.call_all(ModelPoolService.delete, due)
        if self.run_dir is not None:
            for key in due:
                self.run_dir.snapshots.delete(key)
        league.call_all(LeagueService.deleted, due)
        self.deleted += len(due)
        log.info("retention: deleted the weights of %d retired snapshots (%d in all)",
                 len(due), self.deleted)
