"""The driver's league view: the dashboard feed copies the league's state only when it changed."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from msagent.league import League
from msagent.rundir import RunDir
from msagent.services.learner import Learner
from msagent.services.looping import Drainable
from msagent.train.league_watch import LeagueWatch
from msagent.vocabulary import ModelKey, PolicyRef
from tests.league.helpers import play, started

NO_MIXTURE = SimpleNamespace(every_s=0.0)
"""``[league.mixture]`` off: these views have no game to solve a mixture on."""


class LeagueHandle:
    """A service handle over a real League, counting the calls of each method."""

    name = "LeagueService"

    def __init__(self, league: League) -> None:
        self.league, self.calls = league, {"state_dict": 0, "summary": 0}
        self.kept: list[tuple[str, tuple[Any, ...]]] = []
        """Calls the league service only passes to its database (``record_*``)."""

    def call_each(self, method: Callable[..., Any], *args: Any) -> dict[str, Any]:
        """The league's answer, as one instance's (``LeagueService``'s methods are the
        League's, but for those that write its database)."""
        assert method.__qualname__.startswith("LeagueService.")
        self.calls[method.__name__] = self.calls.get(method.__name__, 0) + 1
        if method.__name__.startswith("record_") and not hasattr(self.league, method.__name__):
            self.kept.append((method.__name__, args))
            return {"LeagueService#0": None}
        return {"LeagueService#0": getattr(self.league, method.__name__)(*args)}


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


class EvaluatorHandle:
    """The evaluator's ``drain`` answers, one per poll (then empty ones)."""

    def __init__(self, drains: list[dict[str, Any]]) -> None:
        self.drains = drains

    def call_each(self, method: Callable[..., Any]) -> dict[str, Any]:
        """The next drain, as one instance's."""
        assert method is Drainable.drain
        found = self.drains.pop(0) if self.drains else {}
        return {"Evaluator#0": {"results": [], "nash_conv": [], "notes": [], "error": None,
                                **found}}


def measure(version: int, value: float) -> dict[str, Any]:
    """One NashConv record as the evaluator drains it."""
    return {"player": "exploiter", "version": version, "nash_conv": value, "time": 1.0}


def test_nash_convs_and_notes_reach_the_view_the_result_and_the_console(capsys) -> None:
    from rich.console import Console

    from msagent.telemetry.result_report import print_result

    handle = LeagueHandle(started())
    evaluator = EvaluatorHandle([{"nash_conv": [measure(1, 0.9)], "notes": ["a note"]},
                                 {"nash_conv": [measure(4, 0.5), measure(6, 0.4)]}])
    cfg = SimpleNamespace(services=SimpleNamespace(evaluator=SimpleNamespace(player="exploiter")),
                          league=SimpleNamespace(psro=None, mixture=NO_MIXTURE))
    view = LeagueWatch(SimpleNamespace(league=handle, evaluator=evaluator, learners={}), cfg=cfg)
    view.poll({})
    assert capsys.readouterr().out == "evaluator: a note\n"
    assert view.view()["nash_conv"] == {"exploiter": measure(1, 0.9)}
    view.poll({})
    assert view.view()["nash_conv"] == {"exploiter": measure(6, 0.4)}
    result = view.result({}, None)
    assert result["league"]["nash_conv"] == [measure(1, 0.9), measure(4, 0.5), measure(6, 0.4)]
    assert result["league"]["evaluated"] == "exploiter"
    # each measure passed to the league service for its database, once
    kept = [m for name, (_, measures) in handle.kept if name == "record_evaluations"
            for m in measures]
    assert kept == [measure(1, 0.9), measure(4, 0.5), measure(6, 0.4)]
    row = {"opponent": "bot:random", "seat": 1, "win_rate": 0.5, "ci_low": 0.4, "ci_high": 0.6,
           "draw_rate": 0.0, "loss_rate": 0.5, "games": 100}
    out = Console(record=True, width=200)
    print_result(out, {"league": {**result["league"], "eval": [row]}})
    text = out.export_text()
    assert "exploiter vs bot:random from seat 1: win 50.0%" in text
    assert "exploiter NashConv 0.4000 at version 6 (first measure 0.9000 at version 1; 3 " \
           "measures)" in text


def exam(version: int, losing: tuple[int, int]) -> dict[str, Any]:
    """One judge's exam as the evaluator drains it."""
    return {"player": "main", "version": version, "judge": "/x/perfect_bot.py", "time": 1.0,
            "seats": {0: {"positions": 200, "losing": losing[0]},
                      1: {"positions": 100, "losing": losing[1]}}}


def test_the_judge_s_exams_reach_the_view_the_scalars_the_result_and_the_console() -> None:
    from rich.console import Console

    from msagent.telemetry.formatting import line, rows
    from msagent.telemetry.result_report import print_result
    from msagent.telemetry.tensorboard import league_scalars

    evaluator = EvaluatorHandle([{"judged": [exam(2, (100, 60))]},
                                 {"judged": [exam(9, (10, 5))]}])
    cfg = SimpleNamespace(services=SimpleNamespace(evaluator=SimpleNamespace(player="main")),
                          league=SimpleNamespace(psro=None, mixture=NO_MIXTURE))
    view = LeagueWatch(SimpleNamespace(league=LeagueHandle(started()), evaluator=evaluator,
                                       learners={}), cfg=cfg)
    view.poll({})
    view.poll({})
    shown = view.view()
    assert shown["judged"] == exam(9, (10, 5))
    assert ("league/losing_moves/seat1", 0.05) in league_scalars(shown)
    assert ("losing moves seat 0", "5.0% (version 9)") in rows({"league": shown})
    assert "losing/seat0=0.050 losing/seat1=0.050" in line({"league": shown})
    result = view.result({}, None)
    assert result["league"]["judged"] == [exam(2, (100, 60)), exam(9, (10, 5))]
    result["league"]["final_eval"] = {
        "games": [{"player": "main", "opponent": "bot:perfect", "seat": 1, "games": 50,
                   "step": 12, "win_rate": 0.0, "draw_rate": 0.98, "loss_rate": 0.02}],
        "judged": {**exam(12, (7, 3)), "judge": "/x/perfect_bot.py"}}
    out = Console(record=True, width=200)
    print_result(out, result)
    text = out.export_text()
    assert ("main as saved (checkpoint 12) vs bot:perfect from seat 1: win 0.0%, draw 98.0%, "
            "loss 2.0% over 50 games") in text
    assert "main as saved (checkpoint 12) plays a losing move from seat 1 in 3.0% of 100" in text
    assert ("main from seat 1 plays a losing move in 5.0% of 100 positions at version 9 "
            "(first exam 60.0% at version 2; judge perfect_bot.py)") in text
    assert "'judged'" not in text  # the exams are told in words, not dumped
    result["league"]["final_eval"]["played"] = "main (mean of main:1..main:9, 3 snapshots) " \
        "(checkpoint 12)"  # final_average = 3
    out = Console(record=True, width=200)
    print_result(out, result)
    text = out.export_text()
    assert ("main (mean of main:1..main:9, 3 snapshots) (checkpoint 12) vs bot:perfect from "
            "seat 1: win 0.0%") in text and "as saved" not in text


class LearnerHandle:
    """One player's learner as the league checkpoint asks it for its state."""

    def call_all(self, method: Callable[..., Any]) -> list[dict[str, Any]]:
        """A tiny learner state."""
        assert method is Learner.export_state
        return [{"tensors": {"w": np.zeros(2, np.float32)}, "state": {"counters": {"updates": 3,
                                                                         "version": 4}}}]


def test_a_resumed_run_s_nash_conv_history_goes_on_from_its_checkpoint(tmp_path) -> None:
    handle = LeagueHandle(started())
    cfg = SimpleNamespace(services=SimpleNamespace(evaluator=SimpleNamespace(player="main")),
                          league=SimpleNamespace(psro=None, mixture=NO_MIXTURE))

    def watch_with(drains: list[dict[str, Any]]) -> LeagueWatch:
        services = SimpleNamespace(league=handle, evaluator=EvaluatorHandle(drains),
                                   learners={"main": LearnerHandle()})
        return LeagueWatch(services, cfg=cfg)

    run_dir = RunDir.create(tmp_path, "run")
    first = watch_with([{"nash_conv": [measure(1, 0.9), measure(5, 0.6)]}])
    first.poll({})
    first.checkpoint(run_dir, {"env_steps": 10}, {})
    assert ("record_checkpoint", (3, 0, {"main": 4})) in handle.kept  # the cut, for the database
    progress = run_dir.latest_checkpoint().state["progress"]
    assert progress["env_steps"] == 10 and len(progress["nash_conv"]) == 2
    resumed = watch_with([{"nash_conv": [measure(9, 0.3)]}])
    resumed.restore(progress)
    resumed.poll({})
    assert [m["version"] for m in resumed.result({}, None)["league"]["nash_conv"]] == [1, 5, 9]


def test_an_evaluator_error_is_named_as_the_evaluators_unless_it_is_the_users() -> None:
    """A solver that cannot solve the game is the user's to fix: its message stands alone (and
    exits 2); anything else failing in the evaluator says where it happened."""
    import pytest

    from msagent.errors import ConfigError, ErrorInfo, RemoteError

    class Evaluator:
        def __init__(self, exc: Exception) -> None:
            self.error = ErrorInfo.of(exc)

        def call_each(self, method: Callable[..., Any]) -> dict[str, Any]:
            return {"MetaEvaluator#0": {"error": self.error, "results": []}}

    handle = LeagueHandle(started())
    for exc, kind, message in [
            (ConfigError("solver = 'nash' needs a zero-sum game"), ConfigError,
             "^solver = 'nash' needs a zero-sum game"),
            (KeyError("entry"), RemoteError, "^the evaluator failed: KeyError: 'entry'")]:
        view = LeagueWatch(SimpleNamespace(league=handle, evaluator=Evaluator(exc),
                                           learners={}))
        with pytest.raises(kind, match=message):
            view.poll({})
