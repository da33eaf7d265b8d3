"""The payoff table: decayed counts, the min-games prior, both orientations, state."""

from __future__ import annotations

import json

import numpy as np
import pytest

from msagent.league import PayoffTable


def test_decay_is_applied_to_the_pair_before_each_record() -> None:
    table = PayoffTable(decay=0.5, min_games=1)
    table.record("a", "b", +1)
    table.record("a", "b", 0)
    table.record("b", "a", +1)  # a loss of a
    assert table.counts("a", "b") == (0.25, 0.5, 1.0)
    assert table.games("a", "b") == 1.75
    assert table.win_rate("a", "b") == pytest.approx(0.5 / 1.75)


def test_decay_touches_only_the_recorded_pair() -> None:
    table = PayoffTable(decay=0.5, min_games=1)
    table.record("a", "b", +1)
    table.record("a", "c", +1)
    assert table.counts("a", "b") == (1.0, 0.0, 0.0)


def test_orientations_agree() -> None:
    table = PayoffTable(decay=1.0, min_games=1)
    table.record("z", "a", +1)
    table.record("z", "a", -1)
    table.record("z", "a", +1)
    assert table.counts("z", "a") == (2.0, 0.0, 1.0)
    assert table.counts("a", "z") == (1.0, 0.0, 2.0)
    assert table.win_rate("z", "a") + table.win_rate("a", "z") == pytest.approx(1.0)


def test_win_rate_is_the_prior_until_min_games() -> None:
    table = PayoffTable(decay=1.0, min_games=3)
    table.record("a", "b", +1)
    table.record("a", "b", +1)
    assert table.win_rate("a", "b") == 0.5
    assert table.win_rate("a", "never") == 0.5
    table.record("a", "b", 0)
    assert table.win_rate("a", "b") == pytest.approx(2.5 / 3)
    np.testing.assert_allclose(table.win_rates("a", ["b", "never"]), [2.5 / 3, 0.5])


def test_matrix_has_nan_for_unplayed_pairs() -> None:
    table = PayoffTable(decay=1.0, min_games=1)
    table.record("a", "b", +1)
    m = table.matrix(["a", "b", "c"])
    assert m[0, 1] == 1.0 and m[1, 0] == 0.0
    assert np.isnan(m[0, 0]) and np.isnan(m[0, 2])


def test_self_records_are_refused() -> None:
    with pytest.raises(ValueError, match="itself"):
        PayoffTable().record("a", "a", 1)


def test_state_round_trip_through_json() -> None:
    table = PayoffTable(decay=0.9, min_games=2)
    for a, b, o in [("a", "b", 1), ("b", "a", 0), ("c", "a", -1)]:
        table.record(a, b, o)
    other = PayoffTable()
    other.load_state_dict(json.loads(json.dumps(table.state_dict())))
    for a, b in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a")]:
        assert other.counts(a, b) == table.counts(a, b)
    assert other.decay == 0.9 and other.min_games == 2
