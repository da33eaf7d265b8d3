"""PSRO state: growing the meta-game, the missing entries, symmetrization, JSON round trip."""

import json

import numpy as np
import pytest

from msagent.psro.state import IterationRecord, PSROState, symmetrized


def test_new_members_leave_only_the_new_row_and_column_missing():
    state = PSROState(2, False, [[], []])
    state.add_members(["a0", "b0"])
    assert state.missing() == [(0, 0)]
    state.fill((0, 0), np.array([1.0, -1.0]))
    state.add_members(["a1", "b1"])
    assert state.missing() == [(0, 1), (1, 0), (1, 1)]
    assert state.members((1, 0)) == ("a1", "b0")
    with pytest.raises(ValueError, match="misses entries"):
        state.meta_game()
    with pytest.raises(ValueError, match="expected 2 finite payoffs"):
        state.fill((0, 1), np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="expected 2 new members"):
        state.add_members(["only_one"])


def test_symmetric_state_shares_one_population_and_averages_seats():
    state = PSROState(2, True, [[]])
    state.add_members(["m0"])
    state.add_members(["m1"])
    assert state.sizes() == [2, 2]
    assert state.population_of(1) == ["m0", "m1"]
    # Seat 0 wins 1 more than seat 1 in every game: seat advantage, no member advantage.
    for entry in state.missing():
        state.fill(entry, np.array([0.5, -0.5]))
    np.testing.assert_allclose(state.meta_game(), np.zeros((2, 2, 2)))


def test_symmetrized_three_players_is_invariant_under_seat_relabelling():
    rng = np.random.default_rng(0)
    payoffs = rng.normal(size=(3, 2, 2, 2))
    sym = symmetrized(payoffs)
    # Player 0's payoff with members (i, j, k) equals player 1's with (j, i, k).
    np.testing.assert_allclose(sym[0], np.transpose(sym[1], (1, 0, 2)))
    np.testing.assert_allclose(sym[0], np.transpose(sym[2], (2, 1, 0)))


def test_json_round_trip_keeps_missing_entries_and_history():
    state = PSROState(2, False, [[], []])
    state.add_members(["a0", "b0"])
    state.fill((0, 0), np.array([0.25, -0.25]), np.array([0.1, 0.1]), games=40)
    state.meta = [np.array([1.0]), np.array([1.0])]
    state.history.append(IterationRecord(0, [1, 1], [[1.0], [1.0]], 0.5, 1.2))
    state.add_members(["a1", "b1"])
    back = PSROState.from_json(json.loads(json.dumps(state.to_json())))
    assert back.populations == state.populations
    np.testing.assert_array_equal(np.isnan(back.payoffs), np.isnan(state.payoffs))
    assert back.games[0, 0, 0] == 40 and back.halfwidth[1, 0, 0] == 0.1
    assert back.history == state.history and back.iteration == 0
