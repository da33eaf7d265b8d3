"""The league running PSRO: the best response's role, snapshots into the population,
opponents drawn from the meta-strategy, resets, episode counting, state round trip."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from msagent.league import League, LeagueSettings, PlayerSpec
from msagent.psro.coordinator import PSROSettings
from msagent.vocabulary import EpisodeResult, Match, ModelKey, PolicyRef

BR = "br"


def psro_league(seed: int = 0, br_init: str = "initial") -> League:
    """A league whose one player is PSRO's best response."""
    settings = LeagueSettings(players=(PlayerSpec(BR, "psro"),),
                              psro=PSROSettings(episodes_per_br=5, games_per_entry=1,
                                                iterations=10, br_init=br_init))
    return League(settings, seed=seed, clock=lambda: 0.0)


def evaluate(league: League, value) -> None:
    """Fill every pending entry exactly with ``value(seats)``."""
    while (task := league.psro.next_task()) is not None:
        league.psro.report(task.task, [value(task.seats)], exact=True)


def train(league: League, games: int) -> None:
    """Report ``games`` training games of the best response."""
    for _ in range(games):
        match = league.next_match(BR)
        league.report(EpisodeResult(0.0, 3, ModelKey(BR, 1), outcome=0.0, match=match))


def snapshot(league: League, version: int):
    """The learner's side of a snapshot."""
    return league.add_snapshot(BR, ModelKey(BR, version), version)


def test_first_snapshot_at_once_then_after_the_budget_with_a_reset():
    league = psro_league()
    assert league.on_update(BR, 0).snapshot
    assert snapshot(league, 1).reset_to is None
    assert league.psro.state.populations == [["br:1"]]
    assert not league.on_update(BR, 1).snapshot  # the entry is not evaluated yet
    evaluate(league, lambda seats: [0.0, 0.0])
    train(league, 4)
    assert not league.on_update(BR, 2).snapshot
    train(league, 1)
    assert league.on_update(BR, 3).snapshot
    order = snapshot(league, 3)
    assert order.reset_to == PolicyRef.parse("br:1")  # each best response starts afresh
    assert league.psro.state.populations == [["br:1", "br:3"]]


def test_warm_started_best_responses_go_on_from_the_newest():
    league = psro_league(br_init="newest")
    league.on_update(BR, 0)
    snapshot(league, 1)
    evaluate(league, lambda seats: [0.0, 0.0])
    train(league, 5)
    assert league.on_update(BR, 3).snapshot
    order = snapshot(league, 3)
    assert order.reset_to is None  # the next response starts from br:3, the one just frozen
    assert league.players[BR].parent == "br:3"
    assert league.psro.state.populations == [["br:1", "br:3"]]


def test_opponents_follow_the_meta_strategy():
    league = psro_league(seed=3)
    league.on_update(BR, 0)
    snapshot(league, 1)
    assert league.next_match(BR).seats == (PolicyRef.player(BR),) * 2  # self-play until solved
    evaluate(league, lambda seats: [0.0, 0.0])
    train(league, 5)
    snapshot(league, 2)
    train(league, 5)
    snapshot(league, 3)

    def rps(seats):  # br:1, br:2, br:3 play rock, paper, scissors
        a, b = (int(s.split(":")[1]) for s in seats)
        win = 0.0 if a == b else (1.0 if (a - b) % 3 == 1 else -1.0)
        return [win, -win]
    evaluate(league, rps)
    np.testing.assert_allclose(list(league.psro.distribution().values()), [1 / 3] * 3, atol=1e-6)
    drawn = Counter()
    for _ in range(3000):
        match = league.next_match(BR)
        drawn.update(str(r) for r in match.opponents())
    assert set(drawn) == {"br:1", "br:2", "br:3"}
    assert all(abs(n / 3000 - 1 / 3) < 0.04 for n in drawn.values())
    assert league.pfsp_distribution(BR) == league.psro.distribution()


def test_state_round_trip_keeps_the_psro_state():
    league = psro_league()
    league.on_update(BR, 0)
    snapshot(league, 1)
    evaluate(league, lambda seats: [0.25, -0.25])
    train(league, 3)
    state = json.loads(json.dumps(league.state_dict()))
    back = League.from_state_dict(league.settings, state, clock=lambda: 0.0)
    assert back.psro.state.populations == [["br:1"]]
    assert back.psro.episodes == {"br": 3} and back.psro.distribution() == {"br:1": 1.0}
    assert back.psro.state.payoffs[0, 0, 0] == 0.25


def test_per_seat_best_responses_keep_their_seat():
    settings = LeagueSettings(players=(PlayerSpec("br_0", "psro"), PlayerSpec("br_1", "psro")),
                              psro=PSROSettings(episodes_per_br=5, games_per_entry=1,
                                                symmetric=False))
    league = League(settings, seed=0, clock=lambda: 0.0)
    first = league.next_match("br_0")
    assert first.learner_seat == 0 and first.fixed_seats
    assert first.seats[1] == PolicyRef.player("br_1")  # the other seat's response, until solved
    for pid in ("br_0", "br_1"):
        assert league.on_update(pid, 0).snapshot
        league.add_snapshot(pid, ModelKey(pid, 1), 0)
    evaluate(league, lambda seats: [0.0, 0.0])
    for _ in range(50):
        match = league.next_match("br_1")
        assert match.learner_seat == 1 and match.seats[0] == PolicyRef.parse("br_0:1")
