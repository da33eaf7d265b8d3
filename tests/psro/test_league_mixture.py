"""The league's mixture on Kuhn poker: the exact meta-game among snapshots (networks) grown
one at a time, solved into a restricted Nash equilibrium, and its NashConv equal to
OpenSpiel's own on the mixture's tables."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability

from msagent.psro import exact
from msagent.psro.league_mixture import ExactMetaGame, mixture_record
from msagent.psro.meta_solvers import nash
from msagent.psro.neural import NetworkTables
from tests.psro.test_probe import kuhn_policy

MEMBERS = [f"p:{v}" for v in range(1, 6)]


def kuhn_tables() -> NetworkTables:
    """Five differently initialised networks of Kuhn poker's shape, as members ``p:1..5``
    (each member's weights pulled into one policy)."""
    weights = {m: kuhn_policy(seed=10 + i).get_weights() for i, m in enumerate(MEMBERS)}
    return NetworkTables(pyspiel.load_game("kuhn_poker"), kuhn_policy(), weights.__getitem__)


def test_entries_are_exact_returns_whatever_the_order_members_come_in() -> None:
    tables = kuhn_tables()
    grown = ExactMetaGame(tables)
    assert grown.add(MEMBERS[:2]) == 2 and grown.add(MEMBERS) == 3 and grown.add(MEMBERS) == 0
    for i, a in enumerate(MEMBERS):
        for j, b in enumerate(MEMBERS):
            want = exact.expected_returns(tables.tree, [tables.member(a)[0], tables.member(b)[1]])
            assert grown.payoffs[:, i, j] == pytest.approx(want, abs=1e-12)
    assert np.allclose(grown.payoffs[0], -grown.payoffs[1])  # zero-sum
    reversed_order = ExactMetaGame(tables)
    reversed_order.add(MEMBERS[::-1])
    back = [reversed_order.members.index(m) for m in MEMBERS]
    assert np.allclose(reversed_order.payoffs[:, back][:, :, back], grown.payoffs)


def test_keep_drops_rows_and_columns_as_if_never_added() -> None:
    tables = kuhn_tables()
    game = ExactMetaGame(tables)
    game.add(MEMBERS)
    game.solve(nash)
    assert game.keep(MEMBERS[2:]) == 2 and not game.solved
    fresh = ExactMetaGame(tables)
    fresh.add(MEMBERS[2:])
    assert game.members == fresh.members and np.allclose(game.payoffs, fresh.payoffs)


def test_the_nash_mixture_is_a_restricted_equilibrium_and_its_nash_conv_is_openspiel_s() -> None:
    game = ExactMetaGame(kuhn_tables())
    game.add(MEMBERS)
    x, y = game.solve(nash)
    value = x @ game.payoffs[0] @ y
    assert (game.payoffs[0] @ y).max() <= value + 1e-7  # no member gains in seat 0
    assert (x @ game.payoffs[1]).max() <= -value + 1e-7  # ... nor in seat 1
    tabular = openspiel_policy.TabularPolicy(pyspiel.load_game("kuhn_poker"))
    for seat, table in enumerate(game.tables_of([x, y])):
        for name, row in zip(game.tables.tree.infostates[seat], table):
            tabular.policy_for_key(name)[:] = row
    expected = exploitability.nash_conv(pyspiel.load_game("kuhn_poker"), tabular)
    assert game.nash_conv([x, y]) == pytest.approx(expected, abs=1e-9)


def test_a_record_keeps_weights_that_matter_and_sums_to_one_per_seat() -> None:
    record = mixture_record(["a:1", "a:2", "b:1"], [np.array([0.7, 0.3, 0.0]),
                                                    np.array([1e-9, 0.0, 1.0])], 0.25, 5.0)
    assert record["seats"] == [{"a:1": pytest.approx(0.7), "a:2": pytest.approx(0.3)},
                               {"b:1": 1.0}]
    assert record["members"] == 3 and record["nash_conv"] == 0.25


def test_a_game_with_more_seats_is_refused() -> None:
    three = pyspiel.load_game("kuhn_poker", {"players": 3})
    tables = NetworkTables(three, None, lambda m: None)
    with pytest.raises(ValueError, match="two-seat"):
        ExactMetaGame(tables)


def test_a_member_whose_weights_cannot_be_pulled_leaves_the_game_as_it_was() -> None:
    tables = kuhn_tables()
    game = ExactMetaGame(tables)
    game.add(MEMBERS[:2])
    before = game.payoffs.copy()
    with pytest.raises(KeyError):
        game.add(["gone:1"])  # the pool lost it (a run that failed meanwhile)
    assert game.members == MEMBERS[:2] and np.array_equal(game.payoffs, before)
    assert game.add(MEMBERS[2:3]) == 1 and game.payoffs.shape == (2, 3, 3)
