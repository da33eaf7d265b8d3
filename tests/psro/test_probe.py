"""The NashConv probe and the evaluator's watch: one policy in every seat of a small
OpenSpiel game, its NashConv equal to OpenSpiel's own, measured only when it is due."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability
from pettingzoo.classic import tictactoe_v3

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.openspiel import OpenSpielAdapter
from msagent.policy import NetworkConfig, Policy
from msagent.psro.probe import NashConvProbe, probe_for_game
from msagent.services.evaluator.nash_conv_watch import NashConvWatch


def kuhn_policy(seed: int = 0, recurrent: bool = False) -> Policy:
    """A small network of Kuhn poker's shape."""
    adapter = OpenSpielAdapter(pyspiel.load_game("kuhn_poker"))
    network = NetworkConfig(hidden=(16,), lstm=8 if recurrent else 0)
    return Policy(adapter.observation_space, adapter.action_space, network, seed=seed)


def as_openspiel(probe: NashConvProbe, policy: Policy) -> openspiel_policy.TabularPolicy:
    """The probe's tables as OpenSpiel's own TabularPolicy."""
    game = pyspiel.load_game("kuhn_poker")
    tabular = openspiel_policy.TabularPolicy(game)
    for seat, table in enumerate(probe.tables(policy)):
        for name, row in zip(probe.tree.infostates[seat], table):
            tabular.policy_for_key(name)[:] = row
    return tabular


@pytest.mark.parametrize("seed", [0, 1])
def test_the_probe_s_nash_conv_is_openspiel_s(seed: int) -> None:
    game = pyspiel.load_game("kuhn_poker")
    probe = probe_for_game(as_multi_agent(game))
    assert isinstance(probe, NashConvProbe) and probe.infostates == 12
    policy = kuhn_policy(seed)
    expected = exploitability.nash_conv(game, as_openspiel(probe, policy))
    assert probe(policy) == pytest.approx(expected, abs=1e-9)
    assert probe(policy) > 0.1  # an untrained network is far from Nash


SIMULTANEOUS = [("goofspiel", {"num_cards": 4, "imp_info": True, "points_order": "descending"},
                 162), ("oshi_zumo", {"coins": 4, "size": 1, "horizon": 4}, None)]
"""Simultaneous-move games (goofspiel with 4 cards and hidden bids, the issue's example) and
the information states the probe finds in their turn-based form (None: not checked)."""


@pytest.mark.parametrize("name,params,infostates", SIMULTANEOUS, ids=["goofspiel", "oshi_zumo"])
def test_a_simultaneous_game_s_nash_conv_is_openspiel_s_on_its_turn_based_form(
        name: str, params: dict, infostates: int | None) -> None:
    """Each seat's table is its network's output on the simultaneous state before its move
    (what it saw in training); OpenSpiel's ``nash_conv`` reads it in the turn-based form."""
    from msagent.psro.game_tree import sequential_form

    game = pyspiel.load_game(name, params)
    probe = probe_for_game(as_multi_agent(game))
    assert isinstance(probe, NashConvProbe), probe
    assert infostates is None or probe.infostates == infostates
    adapter = OpenSpielAdapter(game)
    policy = Policy(adapter.observation_space, adapter.action_space,
                    NetworkConfig(hidden=(16,)), seed=3)
    turn_based = sequential_form(game)
    tabular = openspiel_policy.TabularPolicy(turn_based)
    for seat, table in enumerate(probe.tables(policy)):
        for key, row in zip(probe.tree.infostates[seat], table):
            tabular.policy_for_key(key)[:] = row
    expected = exploitability.nash_conv(turn_based, tabular)
    assert expected > 0.1 and probe(policy) == pytest.approx(expected, abs=1e-9)
    row = len(probe.tree.histories[1]) - 1  # seat 1's last row: its turn-based history is
    history = probe.tree.histories[1][row]  # both seats' moves of each round, then seat 0's
    state = game.new_initial_state()  # pending one (no chance nodes in these two games)
    for first in range(0, len(history) - 1, 2):
        state.apply_actions(history[first:first + 2])
    np.testing.assert_array_equal(probe.inputs.obs[1][row], adapter.observe(state, 1))


def test_games_without_exact_tables_say_why() -> None:
    assert "not an OpenSpiel game" in probe_for_game(as_multi_agent(tictactoe_v3.env()))
    leduc = as_multi_agent(pyspiel.load_game("leduc_poker"))
    assert "more than 100 histories" in probe_for_game(leduc, max_nodes=100)


def settings(every_s: float, max_histories: int = 500_000) -> SimpleNamespace:
    """The evaluator settings the watch reads."""
    return SimpleNamespace(nash_conv_every_s=every_s, player="main",
                           nash_conv_max_histories=max_histories)


def test_the_watch_measures_new_versions_only_and_when_due() -> None:
    game = as_multi_agent(pyspiel.load_game("kuhn_poker"))
    watch = NashConvWatch.for_game(settings(0.0001), game)
    a, b = kuhn_policy(0), kuhn_policy(1)
    (first,) = watch.measure(a, 1)
    assert first["player"] == "main" and first["version"] == 1
    assert first["nash_conv"] == pytest.approx(watch.probe(a))
    assert watch.measure(a, 1) == []  # the same version is not measured twice
    (second,) = watch.measure(b, 2)
    assert second["nash_conv"] == pytest.approx(watch.probe(b)) != first["nash_conv"]
    slow = NashConvWatch.for_game(settings(3600), game)
    assert len(slow.measure(a, 1)) == 1 and slow.measure(b, 2) == []  # not due for an hour


def off_with(watch: NashConvWatch, policy: Policy) -> list[str]:
    """The watch measures nothing, now or later, and says why once."""
    assert watch.measure(policy, 1) == [] and watch.measure(kuhn_policy(), 2) == []
    notes = watch.take_notes()
    assert watch.take_notes() == []
    return notes


def test_the_watch_is_off_when_disabled_or_impossible_and_says_why_once() -> None:
    kuhn = as_multi_agent(pyspiel.load_game("kuhn_poker"))
    assert NashConvWatch.for_game(settings(0), kuhn) is None
    ttt = NashConvWatch.for_game(settings(1), as_multi_agent(tictactoe_v3.env()))
    assert "not an OpenSpiel game" in off_with(ttt, kuhn_policy())[0]
    big = NashConvWatch.for_game(settings(1, max_histories=57), kuhn)  # 58 histories
    (note,) = off_with(big, kuhn_policy())
    assert "more than 57 histories" in note and "nash_conv_max_histories is 57" in note
    fits = NashConvWatch.for_game(settings(1, max_histories=58), kuhn)
    assert len(fits.measure(kuhn_policy(), 1)) == 1 and fits.take_notes() == []
    watch = NashConvWatch.for_game(settings(0.0001), kuhn)
    (note,) = off_with(watch, kuhn_policy(recurrent=True))  # no tables: off, no error
    assert note.startswith("no live NashConv for this policy: action_probs needs")
