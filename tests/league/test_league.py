"""The League coordinator: reports, rejections, the match log, summary and state round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from msagent.league import League, PlayerSpec
from msagent.vocabulary import EpisodeResult, Match, ModelKey, PolicyRef
from tests.league.helpers import play, settings, started


def _result(match: Match | None, outcome: float | None = 1.0) -> EpisodeResult:
    """An episode result of ``match`` with version 7 of the learner."""
    learner = match.learner.name if match else "main"
    return EpisodeResult(1.0, 12, ModelKey(learner, 7), outcome=outcome, match=match)


def test_report_records_from_the_learner_seat() -> None:
    league = started()
    snap = PolicyRef.parse("me:0")
    league.report(_result(Match((snap, PolicyRef.player("main")), learner_seat=1), +1))
    assert league.payoff.counts("main", "me:0") == (1.0, 0.0, 0.0)
    assert league.elo.rating("main") > 1200 > league.elo.rating("me:0")
    assert league.openskill.rating("main") > league.openskill.rating("me:0")
    entry = league.match_log[-1]
    assert entry == {"time": 0.0, "seats": ["me:0", "main"], "learner_seat": 1, "outcome": 1.0,
                     "length": 12, "version": 7}


def test_self_play_is_logged_but_not_rated() -> None:
    league = started()
    league.report(_result(Match((PolicyRef.player("main"),) * 2, 0), -1))
    assert league.payoff.participants() == [] and league.elo.ladder() == []
    assert league.reported == 1 and len(league.match_log) == 1


@pytest.mark.parametrize("match", [
    None,
    Match((PolicyRef.player("ghost"), PolicyRef.player("main")), 0),
    Match((PolicyRef.player("main"), PolicyRef.parse("main:99")), 0),
    Match((PolicyRef.player("main"), PolicyRef.bot("unknown")), 0),
    Match((PolicyRef.parse("main:0"), PolicyRef.player("main")), 0),
])
def test_results_about_unknown_participants_are_rejected(match: Match | None) -> None:
    league = started()
    league.report(_result(match))
    assert (league.rejected, league.reported, len(league.match_log)) == (1, 0, 0)


def test_results_against_declared_bots_are_accepted() -> None:
    league = started(bots={"random": "bots/random.py"})
    league.report(_result(Match((PolicyRef.player("main"), PolicyRef.bot("random")), 0), -1))
    assert league.payoff.counts("main", "bot:random") == (0.0, 0.0, 1.0)


def test_match_log_is_bounded() -> None:
    league = started(match_log_size=5)
    play(league, "main", PolicyRef.parse("le:0"), 0, n=8)
    assert len(league.match_log) == 5 and league.reported == 8


def test_unknown_players_and_foreign_snapshots_raise() -> None:
    league = started()
    with pytest.raises(ValueError, match="unknown player 'ghost'.*'main'"):
        league.next_match("ghost")
    with pytest.raises(ValueError, match="not of player"):
        league.add_snapshot("main", ModelKey("me", 3), 3)


def test_summary_shows_each_player() -> None:
    league = started(payoff_decay=1.0)
    play(league, "me", PolicyRef.player("main"), +1, n=10)
    summary = league.summary()
    assert summary["population"] == 6 and summary["historical"] == 3
    me = summary["players"]["me"]
    assert (me["role"], me["snapshots"], me["win_rate"]) == ("main_exploiter", 1, 1.0)
    assert me["elo"] > 1200


def _busy_league() -> League:
    """A league with snapshots, resets and results."""
    league = started(seed=11)
    rng = np.random.default_rng(0)
    for updates in range(1, 120):
        for pid in league.trainable():
            if league.on_update(pid, updates).snapshot:
                league.add_snapshot(pid, ModelKey(pid, updates), updates)
            match = league.next_match(pid)
            league.report(_result(match, float(rng.choice([-1, 0, 1]))))
    return league


def test_state_round_trip_gives_the_same_league_and_the_same_draws() -> None:
    league = _busy_league()
    state = json.loads(json.dumps(league.state_dict()))
    restored = League.from_state_dict(settings(), state, clock=lambda: 0.0)
    assert restored.players == league.players
    assert restored.historical == league.historical
    assert restored.payoff.state_dict() == league.payoff.state_dict()
    assert restored.elo.ladder() == league.elo.ladder()
    assert restored.openskill.ladder() == league.openskill.ladder()
    assert list(restored.match_log) == list(league.match_log)
    assert any(p.resets for p in league.players.values())
    for pid in ["main", "me", "le"] * 17:
        assert restored.next_match(pid) == league.next_match(pid)
    order = league.add_snapshot("le", ModelKey("le", 500), 500)
    assert restored.add_snapshot("le", ModelKey("le", 500), 500) == order


def test_restoring_keeps_players_new_in_the_settings() -> None:
    league = started()
    bigger = settings(players=settings().players + (settings().players[1].__class__(
        "me2", "main_exploiter"),))
    restored = League.from_state_dict(bigger, league.state_dict())
    assert restored.trainable() == ["main", "me", "le", "me2"]
    assert restored.players["me2"].snapshots == []


def test_seat_weights_draw_the_learner_seat_in_proportion_and_pin_it() -> None:
    players = (PlayerSpec("main", "main", seat_weights=(1.0, 3.0)),
               PlayerSpec("me", "main_exploiter"))
    league = League(settings(players=players), seed=3, clock=lambda: 0.0)
    weighted = [league.next_match("main") for _ in range(4000)]
    share = np.mean([m.learner_seat == 1 for m in weighted])
    assert 0.72 < share < 0.78  # 0.75 expected; a uniform seat would give 0.5
    assert all(m.fixed_seats for m in weighted)  # the worker must not swap them back to even
    even = [league.next_match("me") for _ in range(400)]
    assert not any(m.fixed_seats for m in even)
    assert 0.4 < np.mean([m.learner_seat == 1 for m in even]) < 0.6
    with pytest.raises(ValueError, match="'main' has 2 seat weights for a 3-seat game"):
        league.next_match("main", num_seats=3)


@pytest.mark.parametrize(("weights", "message"), [
    ((1.0, 1.0, 1.0), "has 3 seat weights for a 2-seat game"),
    ((0.0, 0.0), "not all 0"),
    ((1.0, -1.0), ">= 0"),
])
def test_bad_seat_weights_are_refused_naming_the_player(weights: tuple, message: str) -> None:
    players = (PlayerSpec("main", "main", seat_weights=weights),)
    with pytest.raises(ValueError, match="'main'.*" + message.replace("(", r"\(")):
        League(settings(players=players), num_seats=2)
