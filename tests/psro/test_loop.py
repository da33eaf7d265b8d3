"""Seeded PSRO runs with the exact oracle reach a stated NashConv, as OpenSpiel measures it."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability

from msagent.psro.exact_oracle import ExactEvaluator, ExactOracle, TabularMembers, mixture_nash_conv
from msagent.psro.game_tree import build_tree
from msagent.psro.loop import PSRO
from msagent.psro.meta_solvers import make_solver
from msagent.psro.tabular_io import policy_dict


def run(game, solver="nash", iterations=20, symmetric=False):
    """PSRO with the exact oracle; the state and the members."""
    tree = build_tree(game)
    members = TabularMembers(tree)
    psro = PSRO(ExactOracle(members), ExactEvaluator(members), make_solver(solver),
                mixture_nash_conv(members))
    state = psro.start(tree.num_players, symmetric)
    while state.iteration < iterations and state.history[-1].nash_conv > 1e-6:
        psro.step(state)
    return tree, members, state


def test_kuhn_exact_psro_reaches_nash_and_openspiel_agrees():
    tree, members, state = run("kuhn_poker")
    curve = [r.nash_conv for r in state.history]
    assert curve[0] == pytest.approx(0.9166666, abs=1e-6)  # uniform random
    assert curve[-1] <= 0.01 and state.iteration <= 10
    # OpenSpiel's own NashConv of the exported mixture.
    from open_spiel.python import policy as openspiel_policy

    game = pyspiel.load_game("kuhn_poker")
    tabular = openspiel_policy.TabularPolicy(game)
    for key, pairs in policy_dict(tree, members.mixture_profile(state)).items():
        for action, prob in pairs:
            tabular.policy_for_key(key)[action] = prob
    assert exploitability.nash_conv(game, tabular) == pytest.approx(curve[-1], abs=1e-9)


def test_every_entry_is_filled_and_matches_the_members_payoff():
    tree, members, state = run("kuhn_poker", iterations=4)
    assert not np.isnan(state.payoffs).any()
    assert state.payoffs.shape == (2, *state.sizes())
    np.testing.assert_allclose(state.payoffs[0], -state.payoffs[1], atol=1e-12)
    assert [len(p) for p in state.populations] == [state.iteration + 1] * 2
    assert all(abs(sum(m) - 1) < 1e-9 for r in state.history for m in r.meta)


def test_matrix_game_rps_exact_psro_finds_the_uniform_nash():
    tree, members, state = run("matrix_rps", iterations=6)
    assert state.history[-1].nash_conv <= 1e-6
    mixed = members.mixture_profile(state)
    np.testing.assert_allclose(mixed[0][0], [1 / 3] * 3, atol=1e-6)


def test_symmetric_population_on_a_symmetric_matrix_game():
    tree, members, state = run("matrix_rps", iterations=6, symmetric=True)
    assert len(state.populations) == 1
    assert state.history[-1].nash_conv <= 1e-6


def test_general_sum_game_with_prd_lowers_nash_conv():
    # Bach or Stravinsky, general-sum: Nash by LP is refused, PRD works.
    with pytest.raises(ValueError, match="zero-sum"):
        run("matrix_bos", solver="nash", iterations=2)
    tree, members, state = run("matrix_bos", solver="prd", iterations=4)
    assert state.history[-1].nash_conv < state.history[0].nash_conv


@pytest.mark.slow
def test_leduc_exact_psro_gets_below_a_stated_nash_conv():
    tree, members, state = run("leduc_poker", iterations=25)
    assert state.history[0].nash_conv == pytest.approx(4.7472, abs=1e-3)
    assert min(r.nash_conv for r in state.history) <= 2.0
