"""The driver's part of the league's mixture: on a small two-seat OpenSpiel game,
every ``[league.mixture] every_s`` the league's new snapshots join the exact meta-game, which
is solved; the mixture goes to the league (its state, its checkpoints) and its NashConv to the
measures beside the main agent's (``nash_conv/league``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from msagent.config import TrainConfig
from msagent.exporting.snapshot_tables import snapshot_tables
from msagent.psro.league_mixture import ExactMetaGame, mixture_record
from msagent.psro.meta_solvers import resolve_solver
from msagent.services.inference import pull_weights
from msagent.services.league import LeagueService
from msagent.vocabulary import LEAGUE_MIXTURE, PolicyRef

log = logging.getLogger("msagent.train")


class MixtureWatch:
    """Grows, solves and measures the league's meta-game at most every ``every_s`` seconds.

    Args:
        game: The exact meta-game over the members' tables.
        call: A call to the league service.
        every_s: Least time between two solves.
        solver: The meta-solver's name.
        max_members: The newest this many snapshots are the members.
    """

    def __init__(self, game: ExactMetaGame, call: Callable[..., Any], every_s: float,
                 solver: str, max_members: int) -> None:
        self.game, self.call, self.every_s = game, call, every_s
        self.solver, self.max_members = resolve_solver(solver), max_members
        self._next = 0.0

    @classmethod
    def for_run(cls, cfg: TrainConfig, call: Callable[..., Any]) -> MixtureWatch | None:
        """The watch the run's ``[league.mixture]`` asks for, or None (off, PSRO, or a game
        without exact tables: said once in the log)."""
        spec = cfg.league.mixture
        if spec.every_s <= 0 or cfg.league.psro is not None:
            return None
        # as large a tree as the evaluator's live NashConv takes (the driver holds this one)
        tables = snapshot_tables(cfg, lambda m: pull_weights(PolicyRef.parse(m).key),
                                 cfg.services.evaluator.nash_conv_max_histories)
        if isinstance(tables, str) or tables.tree.num_players != 2:
            why = tables if isinstance(tables, str) else "the game has more than two seats"
            log.info("league mixture: not computed (%s); it needs a small two-seat "
                     "OpenSpiel game", why)
            return None
        return cls(ExactMetaGame(tables), call, spec.every_s, spec.solver, spec.max_members)

    def poll(self, force: bool = False) -> dict[str, Any] | None:
        """A NashConv measure of the newest mixture when one was solved now, else None
        (``force``: solve now if the snapshots changed, due or not: the run's end)."""
        now = time.monotonic()
        if now < self._next and not force:
            return None
        self._next = now + self.every_s
        members = self.call(LeagueService.snapshot_ids)[-self.max_members:]
        self.game.keep(members)
        self.game.add(members)
        if not members or self.game.solved:
            return None
        metas = self.game.solve(self.solver)
        record = mixture_record(self.game.members, metas, self.game.nash_conv(metas), time.time())
        self.call(LeagueService.record_mixture, record)
        return {"player": LEAGUE_MIXTURE, "version": len(self.game.members),
                "nash_conv": record["nash_conv"], "time": record["time"]}
