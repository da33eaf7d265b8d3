"""Snapshot and reset rules of each role, and whom each role plays."""

from __future__ import annotations

import pytest
from collections import Counter

import numpy as np

from msagent.league import League, LeagueExploiterSettings, MainExploiterSettings, MainSettings
from msagent.vocabulary import PLAYER, SNAPSHOT, ModelKey, PolicyRef
from tests.league.helpers import play, settings, started

MAIN = PolicyRef.player("main")


def test_every_player_is_snapshotted_at_once_then_every_n_updates() -> None:
    league = started(main=MainSettings(snapshot_every_updates=5))
    assert sorted(league.historical) == ["le:0", "main:0", "me:0"]
    assert not league.on_update("main", 4).snapshot
    assert league.on_update("main", 5).snapshot
    league.add_snapshot("main", ModelKey("main", 5), 5)
    assert not league.on_update("main", 9).snapshot
    assert league.on_update("main", 10).snapshot


def test_a_high_win_rate_with_enough_games_triggers_a_snapshot() -> None:
    league = started(payoff_decay=1.0, main_exploiter=MainExploiterSettings(
        snapshot_every_updates=1000, snapshot_min_updates=3))
    play(league, "me", MAIN, +1, n=9)
    assert not league.on_update("me", 3).snapshot  # 9 < min_games = 10
    play(league, "me", MAIN, +1)
    assert not league.on_update("me", 2).snapshot  # too soon after the last snapshot
    assert league.on_update("me", 3).snapshot


def test_a_low_win_rate_does_not_trigger_a_snapshot() -> None:
    league = started(main_exploiter=MainExploiterSettings(snapshot_every_updates=1000))
    play(league, "me", MAIN, +1, n=6)
    play(league, "me", MAIN, -1, n=6)
    assert not league.on_update("me", 500).snapshot


def test_main_exploiter_resets_to_its_initial_snapshot_after_each_later_snapshot() -> None:
    league = started()
    for version in (10, 20):
        order = league.add_snapshot("me", ModelKey("me", version), version)
        assert order.reset_to == PolicyRef.snapshot(ModelKey("me", 0))
    me = league.players["me"]
    assert (me.parent, me.resets, me.snapshots) == ("me:0", 2, [0, 10, 20])
    assert league.historical["me:20"].parent == "me:0"


def test_main_never_resets_and_its_lineage_is_a_chain() -> None:
    league = started()
    orders = [league.add_snapshot("main", ModelKey("main", v), v) for v in range(1, 21)]
    assert all(o.reset_to is None for o in orders)
    assert league.players["main"].resets == 0
    assert league.historical["main:20"].parent == "main:19"
    assert league.players["main"].parent == "main:20"


def test_league_exploiter_resets_with_its_probability() -> None:
    league = started(seed=3)
    resets = [league.add_snapshot("le", ModelKey("le", v), v).reset_to for v in range(1, 401)]
    share = sum(r is not None for r in resets) / len(resets)
    assert abs(share - 0.25) < 0.05
    assert {r for r in resets if r is not None} == {PolicyRef.snapshot(ModelKey("le", 0))}
    for prob, expected in ((0.0, 0), (1.0, 10)):
        league = started(league_exploiter=LeagueExploiterSettings(reset_prob=prob))
        orders = [league.add_snapshot("le", ModelKey("le", v), v) for v in range(1, 11)]
        assert sum(o.reset_to is not None for o in orders) == expected


def _opponents(league: League, pid: str, n: int = 2000) -> tuple[Counter[str], float]:
    """Opponent ids of ``n`` matches and the share of matches with the learner in seat 0."""
    matches = [league.next_match(pid) for _ in range(n)]
    assert all(m.learner == PolicyRef.player(pid) for m in matches)
    seat0 = sum(m.learner_seat == 0 for m in matches) / n
    return Counter(str(m.opponents()[0]) for m in matches), seat0


@pytest.mark.slow
def test_main_plays_the_configured_mix_from_both_seats() -> None:
    counts, seat0 = _opponents(started(seed=7), "main")
    assert abs(seat0 - 0.5) < 0.05
    assert abs(counts["main"] / 2000 - 0.35) < 0.05
    assert abs((counts["me"] + counts["le"]) / 2000 - 0.15) < 0.04
    snapshots = sum(c for pid, c in counts.items() if ":" in pid)
    assert abs(snapshots / 2000 - 0.5) < 0.05


def test_main_trains_against_its_bot_opponents_with_their_weight() -> None:
    main = MainSettings(self_play=0.3, pfsp=0.4, exploiters=0.1, bots=0.2,
                        bot_opponents=("greedy", "random"))
    counts, _ = _opponents(started(seed=3, main=main, bots={"greedy": "g.py", "random": "r.py",
                                                             "lookahead": "l.py"}), "main")
    assert "bot:lookahead" not in counts  # declared, but not one of main's opponents
    assert abs((counts["bot:greedy"] + counts["bot:random"]) / 2000 - 0.2) < 0.04
    assert abs(counts["bot:greedy"] / 2000 - 0.1) < 0.03
    assert abs(counts["main"] / 2000 - 0.3) < 0.05


def test_main_exploiters_share_falls_back_to_pfsp_without_exploiters() -> None:
    league = League(settings(players=settings().players[:1]), seed=1)
    league.add_snapshot("main", ModelKey("main", 0), 0)
    counts, _ = _opponents(league, "main")
    assert set(counts) == {"main", "main:0"}
    assert abs(counts["main"] / 2000 - 0.35) < 0.05


def test_without_snapshots_every_role_plays_itself_or_the_main_agent() -> None:
    league = League(settings(), seed=0)
    assert {str(league.next_match("main").opponents()[0]) for _ in range(50)} == {"main"}
    assert {str(league.next_match("le").opponents()[0]) for _ in range(50)} == {"le"}
    assert {str(league.next_match("me").opponents()[0]) for _ in range(50)} == {"main"}


def test_main_exploiter_plays_main_until_it_loses_badly_then_main_snapshots() -> None:
    league = started(seed=2)
    league.add_snapshot("main", ModelKey("main", 10), 10)
    counts, _ = _opponents(league, "me", 300)
    assert set(counts) == {"main"}
    play(league, "me", MAIN, -1, n=20)
    counts, _ = _opponents(league, "me", 300)
    assert set(counts) == {"main:0", "main:10"}


def test_league_exploiter_pfsp_skips_snapshots_it_always_beats() -> None:
    league = started(seed=4)
    play(league, "le", PolicyRef.parse("main:0"), +1, n=12)  # 10+ decayed games
    counts, _ = _opponents(league, "le", 600)
    assert set(counts) == {"me:0", "le:0"}
    assert league.pfsp_distribution("le") == {"main:0": 0.0, "me:0": 0.5, "le:0": 0.5}


def test_more_seats_each_get_an_opponent() -> None:
    league = started(seed=5)
    matches = [league.next_match("le", num_seats=4) for _ in range(200)]
    assert all(len(m.seats) == 4 and m.seats.count(PolicyRef.player("le")) >= 1 for m in matches)
    assert {m.learner_seat for m in matches} == {0, 1, 2, 3}
    assert all(r.kind in (PLAYER, SNAPSHOT) for m in matches for r in m.opponents())
    assert len({m.opponents() for m in matches}) > 10


def test_main_pfsp_distribution_prefers_what_beats_it() -> None:
    league = started()
    play(league, "main", PolicyRef.parse("me:0"), -1, n=12)
    dist = league.pfsp_distribution("main")
    assert set(dist) == {"main:0", "me:0", "le:0"}
    assert np.isclose(sum(dist.values()), 1.0)
    assert dist["me:0"] > dist["main:0"] == dist["le:0"]


def test_main_exploiter_resets_to_mains_newest_snapshot_when_asked() -> None:
    league = started(main_exploiter=MainExploiterSettings(reset_to="main"))
    for version in (7, 9):
        league.add_snapshot("main", ModelKey("main", version), version)
    league.add_snapshot("le", ModelKey("le", 12), 12)  # newer, but not a main agent's
    order = league.add_snapshot("me", ModelKey("me", 10), 10)
    assert order.reset_to == PolicyRef.snapshot(ModelKey("main", 9))
    assert league.players["me"].parent == "main:9"  # the lineage shows where it came from


def test_main_exploiter_reset_to_an_unknown_target_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="reset_to must be 'initial' or 'main', got 'best'"):
        MainExploiterSettings(reset_to="best")


def test_a_league_exploiter_on_the_mixture_draws_each_seat_s_opponent_by_its_weights() -> None:
    league = started(seed=5, league_exploiter=LeagueExploiterSettings(opponents="mixture"))
    before, _ = _opponents(league, "le", 400)  # no mixture yet: PFSP over every snapshot
    assert set(before) == {"main:0", "me:0", "le:0"}
    league.record_mixture({"members": 3, "seats": [{"main:0": 0.8, "me:0": 0.2}, {"le:0": 1.0}],
                           "nash_conv": 0.5, "time": 0.0})
    matches = [league.next_match("le") for _ in range(2000)]
    by_seat: dict[int, Counter[str]] = {0: Counter(), 1: Counter()}
    for m in matches:  # the opponent sits in the other seat and is drawn by that seat's weights
        by_seat[1 - m.learner_seat][str(m.opponents()[0])] += 1
    assert set(by_seat[1]) == {"le:0"}
    assert set(by_seat[0]) == {"main:0", "me:0"}
    assert abs(by_seat[0]["main:0"] / sum(by_seat[0].values()) - 0.8) < 0.05
    assert League.from_state_dict(league.settings, league.state_dict()).mixture == league.mixture


def test_a_mixture_naming_an_unknown_snapshot_is_refused() -> None:
    league = started()
    with pytest.raises(ValueError, match=r"does not have: \['main:9'\]"):
        league.record_mixture({"members": 1, "seats": [{"main:9": 1.0}, {"main:0": 1.0}],
                               "nash_conv": 0.1, "time": 0.0})
    with pytest.raises(ValueError, match="'pfsp' or 'mixture'"):
        LeagueExploiterSettings(opponents="nash")
