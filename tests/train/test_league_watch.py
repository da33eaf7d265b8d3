"""The driver's league view: the dashboard feed copies the league's state only when it changed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from msagent.league import League
from msagent.train.league_watch import LeagueWatch
from msagent.vocabulary import ModelKey, PolicyRef
from tests.league.helpers import play, started


class LeagueHandle:
    """A service handle over a real League, counting the calls of each method."""

    name = "LeagueService"

    def __init__(self, league: League) -> None:
        self.league, self.calls = league, {"state_dict": 0, "summary": 0}

    def call_each(self, method: str, *args: Any) -> dict[str, Any]:
        """The league's answer, as one instance's."""
        self.calls[method] += 1
        return {"LeagueService#0": getattr(self.league, method)(*args)}


def watch(league: League) -> tuple[LeagueWatch, LeagueHandle]:
    """A LeagueWatch of ``league`` (no evaluator), polled once."""
    handle = LeagueHandle(league)
    view = LeagueWatch(SimpleNamespace(league=handle, evaluator=None, learners={}))
    view.poll({})
    return view, handle


def repoll(view: LeagueWatch) -> None:
    """Refresh the summary now, as the driver does every few seconds."""
    view._next_summary = 0.0
    view.poll({})


def test_feed_state_is_fetched_again_only_after_the_league_changed() -> None:
    league = started()
    view, handle = watch(league)
    first = view.feed_state()
    assert handle.calls["state_dict"] == 1 and first["reported"] == 0
    repoll(view)
    assert view.feed_state() is first and handle.calls["state_dict"] == 1
    play(league, "main", PolicyRef.parse("me:0"), +1.0, n=3)
    assert view.feed_state() is first  # the summary has not seen the games yet
    repoll(view)
    assert view.feed_state()["reported"] == 3 and handle.calls["state_dict"] == 2


def test_a_new_snapshot_without_games_refreshes_the_feed_state() -> None:
    league = started()
    view, handle = watch(league)
    before = view.feed_state()
    assert league.on_update("me", 10_000).snapshot
    league.add_snapshot("me", ModelKey("me", 5), 10_000)
    repoll(view)
    after = view.feed_state()
    assert handle.calls["state_dict"] == 2
    assert len(after["historical"]) == len(before["historical"]) + 1
