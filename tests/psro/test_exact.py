"""The exact tree tools agree with OpenSpiel's own NashConv, best response and policy
aggregation, on random profiles of several games."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import best_response as openspiel_br
from open_spiel.python.algorithms import exploitability, policy_aggregator

from msagent.psro import exact
from msagent.psro.game_tree import GameTooLargeError, build_tree
from msagent.psro.tabular_io import policy_dict, read_policy, to_openspiel, write_policy

GAMES = ["kuhn_poker", "leduc_poker", "goofspiel(num_cards=3)", "kuhn_poker(players=3)"]


def random_profile(tree, seed):
    """A random fully mixed tabular profile."""
    rng = np.random.default_rng(seed)
    out = []
    for p in range(tree.num_players):
        x = rng.random(tree.legal[p].shape) * tree.legal[p]
        out.append(x / x.sum(axis=1, keepdims=True))
    return out


def openspiel_game(name):
    """The game as the exact tools see it (simultaneous games turned turn-based)."""
    game = pyspiel.load_game(name)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    return game


def as_openspiel(game, tree, profile):
    """The profile as an OpenSpiel TabularPolicy."""
    tabular = openspiel_policy.TabularPolicy(game)
    for p, policy in enumerate(profile):
        for row, key in enumerate(tree.infostates[p]):
            tabular.policy_for_key(key)[:] = policy[row]
    return tabular


@pytest.mark.parametrize("name", GAMES)
def test_nash_conv_matches_openspiel(name):
    tree, game = build_tree(name), openspiel_game(name)
    for seed in range(2):
        profile = random_profile(tree, seed)
        ours = exact.nash_conv(tree, profile)
        assert ours == pytest.approx(exploitability.nash_conv(game, as_openspiel(game, tree, profile)),
                                     abs=1e-9)
        assert ours > 0.01


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_best_response_value_and_policy_match_openspiel(name):
    tree, game = build_tree(name), openspiel_game(name)
    profile = random_profile(tree, 3)
    reference = as_openspiel(game, tree, profile)
    for player in range(2):
        policy, value = exact.best_response(tree, profile, player)
        br = openspiel_br.BestResponsePolicy(game, player, reference)
        assert value == pytest.approx(br.value(game.new_initial_state()), abs=1e-9)
        # Playing our best response against the others earns that value.
        played = list(profile)
        played[player] = policy
        assert exact.expected_returns(tree, played)[player] == pytest.approx(value, abs=1e-9)
        assert set(np.unique(policy)) == {0.0, 1.0}


def test_expected_returns_of_uniform_kuhn_are_zero_sum_and_match_openspiel():
    tree, game = build_tree("kuhn_poker"), openspiel_game("kuhn_poker")
    profile = random_profile(tree, 5)
    ours = exact.expected_returns(tree, profile)
    from open_spiel.python.algorithms import expected_game_score

    theirs = expected_game_score.policy_value(
        game.new_initial_state(), [as_openspiel(game, tree, profile)] * 2)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    assert ours.sum() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_mixture_matches_openspiel_policy_aggregator(name):
    tree, game = build_tree(name), openspiel_game(name)
    members = [random_profile(tree, s) for s in range(3)]
    members[1] = [exact.best_response(tree, members[0], p)[0] for p in range(2)]  # pure member
    weights = np.array([0.5, 0.3, 0.2])
    ours = [exact.mixture(tree, p, [m[p] for m in members], weights) for p in range(2)]
    pols = [[as_openspiel(game, tree, m) for m in members] for _ in range(2)]
    aggregated = policy_aggregator.PolicyAggregator(game).aggregate(
        [0, 1], pols, [list(weights), list(weights)])
    for p in range(2):
        for row, key in enumerate(tree.infostates[p]):
            want = aggregated.policy[p][key]
            got = {a: ours[p][row, a] for a in np.flatnonzero(tree.legal[p][row])}
            for action, prob in got.items():
                assert prob == pytest.approx(want.get(action, 0.0), abs=1e-9), (key, action)
    # The mixture is worth what the weighted members are worth against a fixed opponent.
    opponent = random_profile(tree, 9)[1]
    mixed_value = exact.expected_returns(tree, [ours[0], opponent])[0]
    weighted = sum(w * exact.expected_returns(tree, [m[0], opponent])[0]
                   for w, m in zip(weights, members))
    assert mixed_value == pytest.approx(weighted, abs=1e-9)


def test_policy_checks_name_the_problem():
    tree = build_tree("kuhn_poker")
    good = exact.uniform_policy(tree, 0)
    with pytest.raises(ValueError, match="shape"):
        exact.check_policy(tree, 0, good[:-1])
    bad = good.copy()
    bad[0] = [1.5, -0.5]
    with pytest.raises(ValueError, match="negative"):
        exact.check_policy(tree, 0, bad)
    bad = good.copy()
    bad[0] = [0.2, 0.2]
    with pytest.raises(ValueError, match="sum to 1"):
        exact.check_policy(tree, 0, bad)


def test_too_large_game_is_refused_by_name():
    with pytest.raises(GameTooLargeError, match="more than 100 histories"):
        build_tree("leduc_poker", max_nodes=100)


def test_tabular_file_round_trips_through_openspiel(tmp_path):
    tree = build_tree("leduc_poker")
    profile = random_profile(tree, 4)
    path = write_policy(tmp_path / "p.json", "leduc_poker()", tree, profile)
    game, tabular = to_openspiel(read_policy(path))
    assert exploitability.nash_conv(game, tabular) == pytest.approx(
        exact.nash_conv(tree, profile), abs=1e-9)
    assert len(policy_dict(tree, profile)) == sum(len(k) for k in tree.infostates)
    (tmp_path / "bad.json").write_text('{"policy": {}}')
    with pytest.raises(ValueError, match="not a msagent-tabular-policy/1 file"):
        read_policy(tmp_path / "bad.json")
