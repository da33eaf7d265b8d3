"""Networks as tables over information states: the tables are the networks' own action
probabilities at what the seats observe, so exact entries agree with games actually played."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyspiel
import pytest
import torch

from msagent.envs.adapters.openspiel import OpenSpielAdapter
from msagent.envs.collector import Acted
from msagent.envs.match_games import play_seating
from msagent.psro import exact
from msagent.psro.neural import (InfostateInputs, NetworkTables, exact_tables_possible,
                                 greedy_table, tables_from_scripts)
from msagent.policy import NetworkConfig, Policy
from msagent.user_scripts import build_policy
from msagent.vocabulary import ModelKey, PolicyRef

REFS = (PolicyRef.parse("a:1"), PolicyRef.parse("b:1"))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def policies(game, privileged=False):
    """Two differently seeded small networks of the game's shape (with ``privileged``, over
    both seats' information states, the actor reading its own seat's only)."""
    adapter = OpenSpielAdapter(game, privileged=privileged)
    network = NetworkConfig(hidden=(16,), actor_inputs=adapter.own_size if privileged else 0)
    return {ref: Policy(adapter.observation_space, adapter.action_space, network, seed=s)
            for s, ref in enumerate(REFS)}


def act_with(nets, greedy=False):
    """A group act function sampling from the networks (``greedy``: their likeliest action)."""
    def act(groups):
        return {ref: Acted(nets[ref].act(obs, masks, greedy), ModelKey(ref.name, 1))
                for ref, (obs, masks, _states) in groups.items()}
    return act


@pytest.mark.slow
@pytest.mark.parametrize("name, privileged", [("kuhn_poker", False), ("leduc_poker", False),
                                              ("leduc_poker", True)])
def test_exact_entry_matches_the_mean_of_played_games(name, privileged):
    game = pyspiel.load_game(name)
    nets = policies(game, privileged)
    weights = {str(r): nets[r].get_weights() for r in REFS}
    spare = next(iter(policies(game, privileged).values()))
    adapter = OpenSpielAdapter(game, privileged=privileged) if privileged else None
    tables = NetworkTables(game, spare, lambda m: weights[m], adapter)
    exact_returns = tables.entry([str(r) for r in REFS])
    envs = [OpenSpielAdapter(game, privileged=privileged) for _ in range(32)]
    played = np.array(play_seating(envs, act_with(nets), REFS, 6000, seed=1))
    assert played.shape == (6000, 2)
    stderr = played[:, 0].std() / np.sqrt(len(played))
    assert abs(played[:, 0].mean() - exact_returns[0]) < 4 * stderr
    np.testing.assert_allclose(exact_returns.sum(), 0.0, atol=1e-12)


def test_tables_are_the_networks_probabilities_on_legal_actions():
    game = pyspiel.load_game("leduc_poker")
    nets = policies(game)
    tables = NetworkTables(game, nets[REFS[0]], lambda m: nets[REFS[1]].get_weights())
    inputs = InfostateInputs(game, tables.tree)
    got = tables.member("b:1")[1]
    want = nets[REFS[1]].action_probs(inputs.obs[1], tables.tree.legal[1])
    np.testing.assert_allclose(got, want, atol=1e-9)
    assert (got[~tables.tree.legal[1]] == 0).all()


def test_greedy_table_plays_each_states_most_likely_action_for_sure():
    table = np.array([[0.2, 0.5, 0.3], [0.0, 0.1, 0.9], [0.6, 0.4, 0.0]])
    np.testing.assert_array_equal(greedy_table(table), [[0, 1, 0], [0, 0, 1], [1, 0, 0]])


def test_greedy_members_are_what_deterministic_acting_plays():
    game = pyspiel.load_game("leduc_poker")
    nets = policies(game)
    weights = {str(r): nets[r].get_weights() for r in REFS}
    tables = NetworkTables(game, policies(game)[REFS[0]], lambda m: weights[m], greedy=True)
    for seat in range(2):
        table = tables.member("b:1")[seat]
        acted = nets[REFS[1]].act(tables.inputs.obs[seat], tables.tree.legal[seat], True)
        np.testing.assert_array_equal(table.argmax(axis=1), acted.actions)
        assert (table.max(axis=1) == 1).all() and (table[~tables.tree.legal[seat]] == 0).all()
    exact_returns = tables.entry([str(r) for r in REFS])
    envs = [OpenSpielAdapter(game) for _ in range(32)]
    played = np.array(play_seating(envs, act_with(nets, greedy=True), REFS, 4000, seed=2))
    stderr = played[:, 0].std() / np.sqrt(len(played))
    assert abs(played[:, 0].mean() - exact_returns[0]) < 4 * stderr
    assert abs(exact_returns[0] - NetworkTables(game, nets[REFS[0]], lambda m: weights[m]).entry(
        [str(r) for r in REFS])[0]) > 4 * stderr  # and differ from the sampling members'


def test_br_gap_measures_how_far_a_trained_response_is_from_an_exact_one():
    game = pyspiel.load_game("leduc_poker")
    nets = policies(game)
    weights = {str(r): nets[r].get_weights() for r in REFS}
    tables = NetworkTables(game, nets[REFS[0]], lambda m: weights[m])
    pops, metas = [["a:1"], ["a:1"]], [np.ones(1), np.ones(1)]
    mix = tables.mixture(pops, metas)
    tables.tables["exact"] = [exact.best_response(tables.tree, mix, s)[0] for s in range(2)]
    assert abs(tables.br_gap(["exact", "exact"], pops, metas)) < 1e-9
    # the population's own member as the response: what it leaves on the table is NashConv
    assert tables.br_gap(["a:1", "a:1"], pops, metas) == pytest.approx(
        tables.nash_conv(pops, metas), abs=1e-9)
    assert tables.br_gap(["b:1", "b:1"], pops, metas) > 0.5


def test_tables_from_an_env_script_that_makes_a_privileged_adapter():
    script = str(EXAMPLES / "openspiel" / "openspiel_env.py")
    agent = str(EXAMPLES / "openspiel" / "openspiel_privileged_agent.py")
    params = {"game": "leduc_poker", "privileged": True}
    member = build_policy(script, agent, params, seed=1)
    found = tables_from_scripts(script, agent, params, 0, lambda m: member.get_weights())
    assert isinstance(found, NetworkTables)
    own = OpenSpielAdapter(pyspiel.load_game("leduc_poker")).own_size
    assert found.inputs.obs[0].shape[1] == 2 * own  # the networks get what they trained on
    actor = member.model.actor
    for seat in range(2):  # and play from the seat's own half alone
        obs = found.inputs.obs[seat]
        with torch.no_grad():
            logits = actor(torch.as_tensor(obs[:, :own]))
        want = np.where(found.tree.legal[seat], torch.softmax(
            logits.masked_fill(~torch.as_tensor(found.tree.legal[seat]), -1e9), 1).numpy(), 0)
        np.testing.assert_allclose(found.member("x")[seat], want, atol=1e-5)


def test_which_games_allow_exact_tables():
    assert exact_tables_possible(pyspiel.load_game("kuhn_poker")) is None
    assert exact_tables_possible(pyspiel.load_game("goofspiel(num_cards=3)")) is None  # turned
    assert "no information-state strings" in exact_tables_possible(pyspiel.load_game("catch"))
    assert "not an OpenSpiel game" in exact_tables_possible(object())


def test_play_seating_plays_exactly_the_games_asked():
    game = pyspiel.load_game("kuhn_poker")
    nets = policies(game)
    calls = []

    def counting(groups):
        calls.append(sum(len(group[0]) for group in groups.values()))
        return act_with(nets)(groups)
    first = play_seating([OpenSpielAdapter(game) for _ in range(8)], counting, REFS, 20, seed=5)
    assert len(first) == 20 and max(calls) > 1  # several games decided per call
    again = play_seating([OpenSpielAdapter(game) for _ in range(8)], act_with(policies(game)),
                         REFS, 20, seed=5)
    assert len(again) == 20
