"""Shared builders of the league tests."""

from __future__ import annotations

from msagent.league import League, LeagueSettings, PlayerSpec
from msagent.vocabulary import EpisodeResult, Match, ModelKey, PolicyRef

THREE = (PlayerSpec("main", "main"), PlayerSpec("me", "main_exploiter"),
         PlayerSpec("le", "league_exploiter"))
"""One player of each role."""


def settings(**kwargs: object) -> LeagueSettings:
    """League settings with one player per role (overridable)."""
    return LeagueSettings(**{"players": THREE, **kwargs})  # type: ignore[arg-type]


def started(seed: int = 0, **kwargs: object) -> League:
    """A league whose players each hold their initial snapshot (version 0)."""
    league = League(settings(**kwargs), seed=seed, clock=lambda: 0.0)
    for pid in league.trainable():
        assert league.on_update(pid, 0).snapshot
        league.add_snapshot(pid, ModelKey(pid, 0), 0)
    return league


def play(league: League, learner: str, opponent: PolicyRef, outcome: float, n: int = 1) -> None:
    """Report ``n`` two-seat games of player ``learner`` (seat 0) against ``opponent``."""
    match = Match((PolicyRef.player(learner), opponent), 0)
    for _ in range(n):
        league.report(EpisodeResult(0.0, 10, ModelKey(learner, 3), outcome=outcome, match=match))
