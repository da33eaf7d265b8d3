"""Meta-solvers: from an empirical meta-game to one distribution per player.

A meta-solver is a pure function of the payoff tensor ``payoffs`` of shape
``(P, n_1, ..., n_P)``, where ``payoffs[p][i_1, ..., i_P]`` is player ``p``'s expected payoff
when each player ``q`` plays its population member ``i_q``. It returns one probability vector
(float64, non-negative, summing to 1) of length ``n_p`` per player, as OpenSpiel's psro_v2
``meta_strategies`` do. Solvers are registered by name in :data:`SOLVERS`; ``make_solver``
builds one with other parameters, ``resolve_solver`` also accepts (and checks) a user's
callable.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from msagent.errors import ConfigError

MetaSolver = Callable[[np.ndarray], list[np.ndarray]]

_OUTPUT_TOL = 1e-6  # a user solver's vectors must sum to 1 within this
_NEGATIVE_TOL = 1e-9  # ... and be no more negative than this (then clipped)


def check_payoffs(payoffs: np.ndarray) -> np.ndarray:
    """Validate a meta-game tensor so every solver fails early and clearly on a bad one.

    Returns:
        The payoffs as a float64 array.

    Raises:
        ValueError: Not ``(P, n_1, ..., n_P)`` with ``P >= 2``, an empty population, or a
            NaN / infinite payoff.
    """
    arr = np.asarray(payoffs, dtype=np.float64)
    if arr.ndim < 3 or arr.shape[0] != arr.ndim - 1:
        raise ValueError(f"payoffs must have shape (P, n_1, ..., n_P) with P >= 2 players; got "
                         f"shape {arr.shape} (leading dim must equal the number of other axes)")
    if min(arr.shape[1:]) == 0:
        raise ValueError(f"payoffs have an empty population: population sizes {arr.shape[1:]}")
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"payoffs must be finite; payoffs{list(bad)} = {arr[bad]}")
    return arr


def uniform(payoffs: np.ndarray) -> list[np.ndarray]:
    """Uniform over each population: PSRO with it is fictitious play."""
    return [np.full(n, 1.0 / n) for n in check_payoffs(payoffs).shape[1:]]


def last(payoffs: np.ndarray) -> list[np.ndarray]:
    """All mass on each population's newest member: PSRO with it is self-play."""
    return [_one_hot(n, n - 1) for n in check_payoffs(payoffs).shape[1:]]


def _one_hot(n: int, i: int) -> np.ndarray:
    """A point mass on index ``i`` of ``n``."""
    out = np.zeros(n)
    out[i] = 1.0
    return out


def nash(payoffs: np.ndarray) -> list[np.ndarray]:
    """Each player's maximin strategy: the Nash equilibrium of a two-player constant-sum game."""
    arr = _require_constant_sum(check_payoffs(payoffs))
    return [_maximin(arr[0]), _maximin(arr[1].T)]


def _require_constant_sum(arr: np.ndarray) -> np.ndarray:
    """Refuse games where maximin is not Nash (more players, or payoffs not constant-sum)."""
    hint = "use 'prd' or 'alpharank' for such games"
    if arr.shape[0] != 2:
        raise ConfigError(f"[league.psro] solver = 'nash' needs a two-player game, got "
                          f"{arr.shape[0]} players; {hint}")
    total = arr[0] + arr[1]
    spread = float(total.max() - total.min())
    if spread > 1e-6 * max(1.0, float(np.abs(arr).max())):
        raise ConfigError(f"[league.psro] solver = 'nash' needs a zero-sum (or constant-sum) "
                          f"game, but payoffs[0] + payoffs[1] varies by {spread:.3g} across "
                          f"the entries measured; {hint}")
    return arr


def _maximin(own: np.ndarray) -> np.ndarray:
    """Solve max_x min_j (x^T own)_j by LP, ``own[i, j]`` the payoff of own i against j."""
    n, k = own.shape
    cost = np.zeros(n + 1)
    cost[-1] = -1.0  # maximise the value v, the last variable
    a_ub = np.hstack([-own.T, np.ones((k, 1))])  # v - x^T own[:, j] <= 0 for every j
    a_eq = np.append(np.ones(n), 0.0)[None, :]
    bounds = [(0.0, None)] * n + [(None, None)]
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(k), A_eq=a_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if res.status != 0:
        raise RuntimeError(f"meta-solver 'nash': linprog failed: {res.message}")
    return _renormalize(res.x[:n])


def _renormalize(x: np.ndarray) -> np.ndarray:
    """Clip the tiny negatives a numerical solver leaves and rescale to sum 1."""
    x = np.clip(np.asarray(x, dtype=np.float64), 0.0, None)
    return x / x.sum()


@dataclass(frozen=True)
class _Flat:
    """A game seen through the concatenation ``z`` of all players' strategies."""

    sizes: np.ndarray  # n_p for each player
    seg: np.ndarray  # (P, sum n_p) 0/1 matrix: seg @ w sums w over each player's block
    values: Callable[[np.ndarray], np.ndarray]  # z -> each pure strategy's expected payoff

    def expand(self, per_player: np.ndarray) -> np.ndarray:
        """Repeat one number per player over that player's block."""
        return np.repeat(per_player, self.sizes)

    def uniform(self) -> np.ndarray:
        """The uniform profile."""
        return self.expand(1.0 / self.sizes)

    def split(self, z: np.ndarray) -> list[np.ndarray]:
        """One normalized vector per player."""
        return [_renormalize(b) for b in np.split(z, np.cumsum(self.sizes)[:-1])]


def _flatten(arr: np.ndarray) -> _Flat:
    """Build the flat view; two-player values are one matmul with a block matrix."""
    sizes = np.array(arr.shape[1:])
    seg = (np.arange(len(sizes))[:, None] == np.repeat(np.arange(len(sizes)), sizes)).astype(float)
    if len(sizes) == 2:
        n0 = sizes[0]
        block = np.zeros((sizes.sum(), sizes.sum()))
        block[:n0, n0:], block[n0:, :n0] = arr[0], arr[1].T
        return _Flat(sizes, seg, block.__matmul__)
    own_first = [np.moveaxis(arr[p], p, 0) for p in range(len(sizes))]
    cuts = np.cumsum(sizes)[:-1]
    return _Flat(sizes, seg, lambda z: _values(own_first, np.split(z, cuts)))


def _values(own_first: list[np.ndarray], xs: list[np.ndarray]) -> np.ndarray:
    """Each player's pure-strategy payoffs against the others' mixed strategies."""
    out = []
    for p, tensor in enumerate(own_first):
        for q in range(len(xs) - 1, -1, -1):  # contract the last axis first
            tensor = tensor if q == p else tensor @ xs[q]
        out.append(tensor)
    return np.concatenate(out)


def _gains(flat: _Flat, z: np.ndarray) -> np.ndarray:
    """Each pure strategy's payoff gain over its player's current mix: what both dynamics use."""
    v = flat.values(z)
    return v - flat.expand(flat.seg @ (z * v))


def prd(payoffs: np.ndarray, *, iterations: int = 10_000, dt: float = 1e-3,
        gamma: float = 1e-6, average_last: int | None = None) -> list[np.ndarray]:
    """Projected replicator dynamics (Lanctot et al. 2017), as OpenSpiel's PSRO uses it.

    Args:
        payoffs: The meta-game, ``(P, n_1, ..., n_P)``; any number of players.
        iterations: Euler steps of the dynamics from the uniform profile.
        dt: The step size.
        gamma: Exploration floor: every probability stays at least ``gamma``.
        average_last: Average only the last this many iterates; ``None`` (OpenSpiel's
            default) averages the whole trajectory, the start included.

    Returns:
        The average strategies, one per player.
    """
    flat = _flatten(check_payoffs(payoffs))
    if gamma * flat.sizes.max() >= 1:
        raise ValueError(f"prd: gamma={gamma} times a population size {flat.sizes.max()} >= 1")
    window = iterations + 1 if average_last is None else max(1, min(average_last, iterations + 1))
    start = iterations + 1 - window
    z = flat.uniform()
    total = z.copy() if start == 0 else np.zeros_like(z)
    for t in range(1, iterations + 1):
        z = z * (1.0 + dt * _gains(flat, z))
        if z.min() < gamma:
            z = _project(flat, z, gamma)
        if t >= start:
            total += z
    return flat.split(total)


def _project(flat: _Flat, y: np.ndarray, gamma: float) -> np.ndarray:
    """Euclidean projection of each block onto {x >= gamma, sum x = 1} (Michelot's method)."""
    active = np.ones(y.shape, dtype=bool)
    for _ in range(y.size + 1):  # the active set only shrinks, so this many rounds suffice
        count = flat.seg @ active
        mass = flat.seg @ np.where(active, y, 0.0)
        shift = flat.expand((1.0 - gamma * (flat.sizes - count) - mass) / count)
        still = y + shift > gamma
        if np.array_equal(still, active):
            break
        active = still
    return np.where(active, y + shift, gamma)


def regret(payoffs: np.ndarray, *, iterations: int = 1000) -> list[np.ndarray]:
    """Regret matching by all players at once; the average strategy (Anytime PSRO's solver).

    Args:
        payoffs: The meta-game, ``(P, n_1, ..., n_P)``; any number of players.
        iterations: Rounds of regret matching, from the uniform profile.

    Returns:
        The average over the rounds of the strategies played, one per player.
    """
    flat = _flatten(check_payoffs(payoffs))
    regrets = np.zeros(flat.sizes.sum())
    z = flat.uniform()
    total = np.zeros_like(z)
    for _ in range(iterations):
        total += z
        regrets += _gains(flat, z)
        z = _regret_matching(flat, regrets)
    return flat.split(total)


def _regret_matching(flat: _Flat, regrets: np.ndarray) -> np.ndarray:
    """Play in proportion to positive regret; uniformly where no regret is positive."""
    positive = np.maximum(regrets, 0.0)
    norm = flat.expand(flat.seg @ positive)
    return np.where(norm > 0, positive / np.where(norm > 0, norm, 1.0), flat.uniform())


def alpharank(payoffs: np.ndarray, *, alpha: float = 100.0, m: int = 50,
              max_profiles: int = 4096) -> list[np.ndarray]:
    """Alpha-rank (Omidshafiei et al. 2019): each player's marginal of the stationary mass.

    Args:
        payoffs: The meta-game, ``(P, n_1, ..., n_P)``; any number of players.
        alpha: Ranking intensity (selection strength).
        m: Population size of the evolutionary model.
        max_profiles: Refuse meta-games with more pure profiles than this (the Markov chain
            is dense: memory grows with its square).

    Returns:
        Each player's marginal of the stationary distribution over pure profiles.
    """
    arr = check_payoffs(payoffs)
    shape = arr.shape[1:]
    if alpha < 0 or m < 1:
        raise ValueError(f"alpharank: need alpha >= 0 and m >= 1, got alpha={alpha}, m={m}")
    if int(np.prod(shape)) > max_profiles:
        raise ValueError(f"alpharank: {int(np.prod(shape))} pure profiles exceed "
                         f"max_profiles={max_profiles}; use 'prd' or 'regret'")
    if int(np.prod(shape)) == 1:
        return [np.ones(1) for _ in shape]
    pi = _stationary(_transitions(arr, alpha, m)).reshape(shape)
    axes = range(len(shape))
    return [_renormalize(pi.sum(axis=tuple(a for a in axes if a != p))) for p in axes]


def _transitions(arr: np.ndarray, alpha: float, m: int) -> np.ndarray:
    """The Markov chain on pure profiles: one population at a time adopts a mutant."""
    shape = arr.shape[1:]
    size = int(np.prod(shape))
    eta = 1.0 / sum(n - 1 for n in shape)
    chain = np.zeros((size, size))
    ids = np.arange(size).reshape(shape)
    for k, n in enumerate(shape):
        own = np.moveaxis(arr[k], k, -1)  # (..., n): payoff as population k's strategy varies
        gain = own[..., None, :] - own[..., :, None]  # [..., s, r]: mutant r's gain over s
        src = np.broadcast_to(np.moveaxis(ids, k, -1)[..., :, None], gain.shape)
        dst = np.broadcast_to(np.moveaxis(ids, k, -1)[..., None, :], gain.shape)
        off = ~np.eye(n, dtype=bool)
        chain[src[..., off], dst[..., off]] = eta * _fixation(alpha * gain[..., off], m)
    chain[np.diag_indices(size)] = 1.0 - chain.sum(axis=1)
    return chain


def _fixation(u: np.ndarray, m: int) -> np.ndarray:
    """Fixation probability (1 - e^-u) / (1 - e^-mu) of a mutant, without overflow."""
    pos = np.maximum(u, 1e-300)
    neg = np.maximum(-u, 1e-300)
    rho_pos = np.expm1(-pos) / np.expm1(-m * pos)
    log_neg = (1 - m) * neg + np.log(-np.expm1(-neg)) - np.log(-np.expm1(-m * neg))
    rho = np.where(u > 0, rho_pos, np.exp(log_neg))
    return np.where(np.abs(u) <= 1e-14, 1.0 / m, rho)


def _stationary(chain: np.ndarray) -> np.ndarray:
    """The stationary distribution: solve pi (C - I) = 0, sum pi = 1."""
    size = chain.shape[0]
    system = chain.T - np.eye(size)
    system[-1] = 1.0
    rhs = _one_hot(size, size - 1)
    try:
        pi = np.linalg.solve(system, rhs)
    except np.linalg.LinAlgError:
        pi = np.full(size, np.nan)
    if not np.all(np.isfinite(pi)) or pi.min() < -1e-8:  # several recurrent classes
        stacked = np.vstack([chain.T - np.eye(size), np.ones((1, size))])
        pi = np.linalg.lstsq(stacked, np.append(np.zeros(size), 1.0), rcond=None)[0]
    return _renormalize(pi)


SOLVERS: dict[str, MetaSolver] = {
    "nash": nash,
    "prd": prd,
    "uniform": uniform,
    "last": last,
    "regret": regret,
    "alpharank": alpharank,
}


def make_solver(name: str, **params: object) -> MetaSolver:
    """A registered solver with some parameters overridden, for configurable PSRO runs.

    Raises:
        ConfigError: Unknown solver name, or a parameter the solver does not take.
    """
    base = _lookup(name)
    accepted = [p.name for p in inspect.signature(base).parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ConfigError(f"meta-solver {name!r} has no parameter(s) {unknown}; it accepts "
                          f"{accepted or 'none'}")
    return functools.partial(base, **params) if params else base


def resolve_solver(spec: str | MetaSolver) -> MetaSolver:
    """A solver from a registered name, or a user's callable wrapped so its output is checked.

    Raises:
        ConfigError: Unknown name.
        TypeError: ``spec`` is neither a name nor callable.
    """
    if isinstance(spec, str):
        return _lookup(spec)
    if not callable(spec):
        raise TypeError(f"a meta-solver is a name or a callable, got {type(spec).__name__}")
    if spec in SOLVERS.values():
        return spec

    @functools.wraps(spec)
    def checked(payoffs: np.ndarray) -> list[np.ndarray]:
        arr = check_payoffs(payoffs)
        return _check_output(_solver_name(spec), arr.shape[1:], spec(arr))

    return checked


def _lookup(name: str) -> MetaSolver:
    """The registered solver ``name``, or an error listing the known names."""
    if name not in SOLVERS:
        raise ConfigError(f"unknown meta-solver {name!r}; known: {sorted(SOLVERS)}")
    return SOLVERS[name]


def _solver_name(fn: Callable[..., object]) -> str:
    """A readable name for error messages (a partial shows its function's)."""
    fn = fn.func if isinstance(fn, functools.partial) else fn
    return getattr(fn, "__name__", None) or repr(fn)


def _check_output(name: str, sizes: tuple[int, ...], out: object) -> list[np.ndarray]:
    """Check a user solver's distributions (count, lengths, signs, sums); renormalize them."""
    if not isinstance(out, (list, tuple)) or len(out) != len(sizes):
        got = f"{len(out)} items" if isinstance(out, (list, tuple)) else type(out).__name__
        raise ValueError(f"meta-solver {name!r} must return a list of {len(sizes)} "
                         f"distributions (one per player), got {got}")
    return [_check_distribution(name, p, n, x) for p, (n, x) in enumerate(zip(sizes, out))]


def _check_distribution(name: str, player: int, n: int, x: object) -> np.ndarray:
    """One player's vector: length ``n``, finite, non-negative, summing to 1."""
    where = f"meta-solver {name!r}, player {player}"
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{where}: expected a vector of length {n}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or arr.min() < -_NEGATIVE_TOL:
        raise ValueError(f"{where}: probabilities must be finite and non-negative, got {arr}")
    if abs(arr.sum() - 1.0) > _OUTPUT_TOL:
        raise ValueError(f"{where}: probabilities must sum to 1, got sum {arr.sum():.9g}")
    return _renormalize(arr)
