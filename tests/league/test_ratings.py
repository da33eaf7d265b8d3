"""Elo and OpenSkill ratings."""

from __future__ import annotations

import json

import pytest

from msagent.league import Elo, OpenSkillRating


def test_elo_win_between_equals() -> None:
    elo = Elo(k=16)
    elo.update("a", "b", +1)
    assert elo.rating("a") == pytest.approx(1208.0)
    assert elo.rating("b") == pytest.approx(1192.0)
    assert elo.ladder() == [("a", pytest.approx(1208.0)), ("b", pytest.approx(1192.0))]


def test_elo_draw_between_equals_changes_nothing_and_upset_moves_more() -> None:
    elo = Elo(k=16)
    elo.update("a", "b", 0)
    assert elo.rating("a") == 1200.0 and elo.rating("b") == 1200.0
    elo.load_state_dict({"k": 16, "start": 1200, "ratings": {"a": 1400.0, "b": 1200.0}})
    elo.update("a", "b", -1)
    expected_a = 1 / (1 + 10 ** (-200 / 400))
    assert elo.rating("a") == pytest.approx(1400 - 16 * expected_a)
    assert elo.rating("b") == pytest.approx(1200 + 16 * expected_a)


def test_openskill_winner_ordinal_rises_and_loser_falls() -> None:
    skill = OpenSkillRating()
    before = skill.rating("a")
    skill.update("a", "b", +1)
    assert skill.rating("a") > before > skill.rating("b")
    assert [pid for pid, _ in skill.ladder()] == ["a", "b"]


def test_rating_states_are_plain_json() -> None:
    elo, skill = Elo(k=32), OpenSkillRating()
    for r in (elo, skill):
        r.update("a", "b", 1)
        r.update("c", "a", 0)
    for r, fresh in ((elo, Elo()), (skill, OpenSkillRating())):
        fresh.load_state_dict(json.loads(json.dumps(r.state_dict())))
        assert fresh.ladder() == r.ladder()
