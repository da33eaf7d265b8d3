"""``LeagueClient``: the calls other services make to ``LeagueService``, typed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from msagent.league import LeagueOrder
from msagent.runtime import call
from msagent.services.league.service import LeagueService
from msagent.vocabulary import EpisodeResult, Match, ModelKey

if TYPE_CHECKING:
    from msagent.psro.coordinator import EvalTask


class LeagueClient:
    """The calls other services make to ``LeagueService``, typed."""

    @staticmethod
    def next_matches(player_id: str, n: int = 1) -> list[Match]:
        """``n`` matches for ``player_id``."""
        return call(LeagueService.next_matches, player_id, n)

    @staticmethod
    def report(results: list[EpisodeResult]) -> int:
        """Record finished games; how many the league has accepted in all."""
        return call(LeagueService.report, results)

    @staticmethod
    def on_update(player_id: str, updates: int) -> LeagueOrder:
        """Whether the player's learner should snapshot now."""
        return call(LeagueService.on_update, player_id, updates)

    @staticmethod
    def add_snapshot(player_id: str, key: ModelKey, updates: int) -> LeagueOrder:
        """Add a frozen snapshot to the league; whether (and to what) to reset."""
        return call(LeagueService.add_snapshot, player_id, key, updates)

    @staticmethod
    def next_eval_task() -> EvalTask | None:
        """PSRO: games to play for one meta-game entry, or None."""
        return call(LeagueService.next_eval_task)

    @staticmethod
    def report_eval(task: int, seat_returns: list[list[float]], exact: bool = False) -> bool:
        """PSRO: a task's returns per seat (or its exact expected returns)."""
        return call(LeagueService.report_eval, task, seat_returns, exact)

    @staticmethod
    def user_metrics() -> dict[str, Any]:
        """The user hooks' scalars and failures in the league service."""
        return call(LeagueService.user_metrics)
