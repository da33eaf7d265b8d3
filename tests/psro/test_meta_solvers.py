"""Meta-solvers: known equilibria, agreement with OpenSpiel, and refusal of bad input."""

from __future__ import annotations

import numpy as np
import pytest
from open_spiel.python.algorithms import projected_replicator_dynamics as os_prd
from open_spiel.python.algorithms.psro_v2 import utils as os_psro_utils
from open_spiel.python.egt import alpharank as os_alpharank

from msagent.psro.meta_solvers import (
    SOLVERS,
    alpharank,
    check_payoffs,
    last,
    make_solver,
    nash,
    prd,
    regret,
    resolve_solver,
    uniform,
)

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
BIASED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])
BIASED_NASH = np.array([0.25, 0.5, 0.25])
PENNIES = np.array([[1.0, -1.0], [-1.0, 1.0]])
# Prisoner's dilemma, strategies (cooperate, defect): defect strictly dominates.
PD = np.stack([np.array([[3.0, 0.0], [5.0, 1.0]]), np.array([[3.0, 5.0], [0.0, 1.0]])])


def zero_sum(matrix: np.ndarray) -> np.ndarray:
    return np.stack([matrix, -matrix])


def assert_distributions(result: list[np.ndarray], sizes: tuple[int, ...]) -> None:
    assert [r.shape for r in result] == [(n,) for n in sizes]
    for r in result:
        assert r.dtype == np.float64 and r.min() >= 0.0 and abs(r.sum() - 1.0) < 1e-12


def best_deviation_gains(payoffs: np.ndarray, profile: list[np.ndarray]) -> list[float]:
    """How much each player of a 2-player game gains by its best pure deviation."""
    x, y = profile
    v0, v1 = payoffs[0] @ y, x @ payoffs[1]
    return [float(v0.max() - x @ v0), float(v1.max() - v1 @ y)]


def test_biased_rps_nash_is_known() -> None:
    # Both players are indifferent between their pure strategies at (1/4, 1/2, 1/4), and the
    # kernel of the (rank 2) matrix is one-dimensional, so the Nash equilibrium is unique.
    np.testing.assert_allclose(BIASED_RPS @ BIASED_NASH, 0.0, atol=1e-15)
    np.testing.assert_allclose(BIASED_NASH @ BIASED_RPS, 0.0, atol=1e-15)
    assert np.linalg.matrix_rank(BIASED_RPS) == 2


@pytest.mark.parametrize(("matrix", "expected"), [
    (RPS, [np.full(3, 1 / 3)] * 2),
    (PENNIES, [np.full(2, 0.5)] * 2),
    (BIASED_RPS, [BIASED_NASH] * 2),
    (np.array([[2.0, 3.0], [1.0, 4.0]]), [np.array([1.0, 0.0]), np.array([1.0, 0.0])]),
])
def test_nash_finds_the_unique_equilibrium(matrix: np.ndarray, expected: list) -> None:
    result = nash(zero_sum(matrix))
    assert_distributions(result, matrix.shape)
    for got, want in zip(result, expected):
        np.testing.assert_allclose(got, want, atol=1e-6)


@pytest.mark.parametrize("matrix", [
    np.array([[1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]),  # duplicated row strategy
    np.zeros((3, 4)),  # every profile is an equilibrium
    np.array([[1.0, 1.0, 2.0], [1.0, 1.0, 0.0]]),  # a saddle region, not a point
])
def test_nash_on_degenerate_games_returns_an_equilibrium(matrix: np.ndarray) -> None:
    payoffs = zero_sum(matrix)
    result = nash(payoffs)
    assert_distributions(result, matrix.shape)
    assert max(best_deviation_gains(payoffs, result)) <= 1e-6


def test_nash_accepts_constant_sum() -> None:
    win_prob = np.array([[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]])
    for got in nash(np.stack([win_prob, 1.0 - win_prob])):
        np.testing.assert_allclose(got, np.full(3, 1 / 3), atol=1e-6)


def test_nash_refuses_general_sum_and_three_players() -> None:
    with pytest.raises(ValueError, match="'nash'.*zero-sum.*'prd' or 'alpharank'"):
        nash(PD)
    with pytest.raises(ValueError, match="'nash'.*two-player.*3 players"):
        nash(np.zeros((3, 2, 2, 2)))


@pytest.mark.parametrize(("matrix", "want", "params", "tol"), [
    (RPS, np.full(3, 1 / 3), {}, 1e-9),
    (BIASED_RPS, BIASED_NASH, {}, 1.5e-2),  # defaults: dt * iterations = 10 time units
    (BIASED_RPS, BIASED_NASH, {"dt": 1e-2}, 1e-2),
])
def test_prd_approaches_nash(matrix: np.ndarray, want: np.ndarray, params: dict,
                             tol: float) -> None:
    result = prd(zero_sum(matrix), **params)
    assert_distributions(result, matrix.shape)
    for got in result:
        np.testing.assert_allclose(got, want, atol=tol)


@pytest.mark.parametrize(("shape", "params"), [
    ((2, 5, 4), {"iterations": 2000, "dt": 1e-2}),
    ((2, 4, 4), {"iterations": 1000, "dt": 1e-2, "gamma": 1e-2}),  # the floor binds
    ((3, 3, 4, 2), {"iterations": 1000, "dt": 1e-2, "gamma": 1e-3}),
    ((2, 3, 3), {"iterations": 500, "dt": 1e-2, "average_last": 100}),
])
def test_prd_matches_openspiel(shape: tuple[int, ...], params: dict) -> None:
    payoffs = np.random.default_rng(sum(shape)).uniform(-1.0, 1.0, shape)
    ours = prd(payoffs, **params)
    theirs = os_prd.projected_replicator_dynamics(
        list(payoffs), prd_iterations=params["iterations"], prd_dt=params["dt"],
        prd_gamma=params.get("gamma", 1e-6),
        average_over_last_n_strategies=params.get("average_last"))
    for got, want in zip(ours, theirs):
        np.testing.assert_allclose(got, want, atol=1e-9)
    if "gamma" in params:
        assert min(r.min() for r in ours) >= params["gamma"] - 1e-12


@pytest.mark.parametrize(("matrix", "want", "tol"), [
    (RPS, np.full(3, 1 / 3), 1e-12), (BIASED_RPS, BIASED_NASH, 2e-2), (PENNIES, [0.5, 0.5], 2e-2),
])
def test_regret_matching_approaches_nash(matrix: np.ndarray, want: np.ndarray,
                                         tol: float) -> None:
    result = regret(zero_sum(matrix))
    assert_distributions(result, matrix.shape)
    for got in result:
        np.testing.assert_allclose(got, want, atol=tol)


@pytest.mark.parametrize("solver", [prd, regret])
def test_three_players_find_the_dominant_strategy(solver) -> None:
    rng = np.random.default_rng(3)
    payoffs = 0.1 * rng.uniform(size=(3, 2, 3, 4))
    for p, n in enumerate((2, 3, 4)):  # strategy 1 earns each player one more, always
        payoffs[p] += np.expand_dims(np.eye(n)[1], [a for a in range(3) if a != p])
    result = solver(payoffs)
    assert_distributions(result, (2, 3, 4))
    assert all(np.argmax(r) == 1 and r[1] > 0.7 for r in result)


def test_uniform_and_last_are_exact() -> None:
    payoffs = np.zeros((2, 3, 5))
    assert [r.tolist() for r in uniform(payoffs)] == [[1 / 3] * 3, [0.2] * 5]
    assert [r.tolist() for r in last(payoffs)] == [[0.0, 0.0, 1.0], [0.0] * 4 + [1.0]]


def openspiel_alpharank(payoffs: np.ndarray, alpha: float, m: int) -> list[np.ndarray]:
    pi = os_alpharank.compute(list(payoffs), alpha=alpha, m=m)[2]
    return os_psro_utils.get_alpharank_marginals(list(payoffs), pi)


@pytest.mark.parametrize("payoffs", [
    zero_sum(RPS), zero_sum(BIASED_RPS), PD,
    # (with seed 0, OpenSpiel's chain underflows at alpha=100 into two stationary vectors)
    np.random.default_rng(1).uniform(-1.0, 1.0, (2, 3, 4)),
    np.random.default_rng(1).uniform(-1.0, 1.0, (3, 2, 3, 2)),
], ids=["rps", "biased-rps", "prisoners-dilemma", "general-sum-3x4", "three-players"])
@pytest.mark.parametrize(("alpha", "m"), [(0.5, 10), (5.0, 50), (100.0, 50)])
@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # in OpenSpiel's exp
def test_alpharank_matches_openspiel(payoffs: np.ndarray, alpha: float, m: int) -> None:
    ours = alpharank(payoffs, alpha=alpha, m=m)
    assert_distributions(ours, payoffs.shape[1:])
    for got, want in zip(ours, openspiel_alpharank(payoffs, alpha, m)):
        np.testing.assert_allclose(got, want, atol=1e-6)


def test_alpharank_puts_all_mass_on_defection_even_with_huge_payoffs() -> None:
    for payoffs in (PD, 1000.0 * PD):  # 1000x overflows a naive exp(alpha * payoff)
        for r in alpharank(payoffs):
            np.testing.assert_allclose(r, [0.0, 1.0], atol=1e-9)


def test_alpharank_refuses_too_many_profiles() -> None:
    with pytest.raises(ValueError, match="max_profiles"):
        alpharank(np.zeros((2, 10, 10)), max_profiles=99)


def test_registry_names_and_every_solver_outputs_distributions() -> None:
    assert set(SOLVERS) == {"nash", "prd", "uniform", "last", "regret", "alpharank"}
    payoffs = zero_sum(np.random.default_rng(2).uniform(-1.0, 1.0, (4, 3)))
    for name in SOLVERS:
        assert resolve_solver(name) is SOLVERS[name]
        assert_distributions(resolve_solver(name)(payoffs), (4, 3))


def test_unknown_names_and_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown meta-solver 'nsh'.*'alpharank'.*'uniform'"):
        resolve_solver("nsh")
    with pytest.raises(ValueError, match=r"'prd' has no parameter.*'alhpa'.*'iterations'"):
        make_solver("prd", alhpa=3)
    with pytest.raises(ValueError, match="'uniform' has no parameter"):
        make_solver("uniform", iterations=3)
    with pytest.raises(TypeError):
        resolve_solver(42)  # type: ignore[arg-type]


def test_make_solver_overrides_parameters() -> None:
    assert make_solver("nash") is nash
    frozen = make_solver("prd", iterations=0)  # no step: the uniform start
    np.testing.assert_array_equal(frozen(zero_sum(BIASED_RPS))[0], np.full(3, 1 / 3))
    weak = make_solver("alpharank", alpha=0.0)  # no selection: every profile alike
    np.testing.assert_allclose(weak(PD)[0], [0.5, 0.5], atol=1e-12)


def test_a_good_user_solver_is_accepted_and_renormalized() -> None:
    def favour_first(payoffs: np.ndarray) -> list[np.ndarray]:
        return [np.eye(n)[0] * (1 + 1e-9) for n in payoffs.shape[1:]]

    result = resolve_solver(favour_first)(np.zeros((2, 2, 3)))
    assert [r.tolist() for r in result] == [[1.0, 0.0], [1.0, 0.0, 0.0]]


@pytest.mark.parametrize(("output", "message"), [
    ([np.ones(2) / 2], "list of 2 distributions.*got 1 items"),
    (np.ones(2) / 2, "list of 2 distributions.*got ndarray"),
    ([np.ones(2) / 2, np.ones(2) / 2], "player 1: expected a vector of length 3"),
    ([np.array([1.5, -0.5]), np.ones(3) / 3], "player 0: .*non-negative"),
    ([np.array([0.5, 0.6]), np.ones(3) / 3], "player 0: .*sum to 1, got sum 1.1"),
    ([np.array([np.nan, 1.0]), np.ones(3) / 3], "player 0: .*finite"),
])
def test_a_bad_user_solver_is_refused(output: object, message: str) -> None:
    def my_solver(payoffs: np.ndarray) -> object:
        return output

    with pytest.raises(ValueError, match=f"meta-solver '.*my_solver'.*{message}"):
        resolve_solver(my_solver)(np.zeros((2, 2, 3)))


@pytest.mark.parametrize(("payoffs", "message"), [
    (np.array([[[0.0, np.nan], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]), "finite.*nan"),
    (np.zeros((3, 2, 2)), "leading dim"),
    (np.zeros((2, 2)), "shape"),
    (np.zeros((2, 0, 3)), "empty population"),
])
def test_malformed_payoffs_are_refused(payoffs: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_payoffs(payoffs)
    for solver in SOLVERS.values():
        with pytest.raises(ValueError, match=message):
            solver(payoffs)
