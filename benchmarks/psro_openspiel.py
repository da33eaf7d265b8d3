"""OpenSpiel's own PSRO (exact best responses, Nash meta-solver): NashConv against wall time.

Run: ``python benchmarks/psro_openspiel.py --game leduc_poker [--target 0.74]``. It runs
``psro_v2.PSROSolver`` with ``best_response_oracle.BestResponseOracle`` as in OpenSpiel's
``examples/psro_v2_example.py`` (``--oracle_type=BR --meta_strategy_method=nash``:
sims_per_entry=1000, symmetric_game=False, probabilistic training-strategy selector, one
policy selected, no rectifier) and prints ``iteration  wall_s  nash_conv`` after every
iteration. ``wall_s`` is PSRO time only (the solver's constructor, which evaluates the
initial meta-game, plus its iterations); the clock pauses while the NashConv of the
meta-strategy mixture is computed for logging. Building the oracle (enumerating all states)
is set-up and is not counted either.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pyspiel
from open_spiel.python import policy
from open_spiel.python.algorithms import exploitability, policy_aggregator
from open_spiel.python.algorithms.psro_v2 import best_response_oracle, psro_v2


@dataclass
class Point:
    """One point of the curve.

    Attributes:
        iteration: PSRO iterations done (0: the initial population).
        wall_s: PSRO time so far in seconds, excluding NashConv logging.
        nash_conv: NashConv of the meta-strategy mixture of the population.
    """

    iteration: int
    wall_s: float
    nash_conv: float


def _nash_conv(game: pyspiel.Game, solver: psro_v2.PSROSolver) -> float:
    """NashConv of the solver's meta-strategy mixture (as in the example's ``gpsro_looper``)."""
    aggregator = policy_aggregator.PolicyAggregator(game)
    mixture = aggregator.aggregate(range(game.num_players()), solver.get_policies(),
                                   solver.get_meta_strategies())
    return float(exploitability.nash_conv(game, mixture))


def run_openspiel_psro(game_name: str, *, iterations: int = 100, time_limit_s: float = 300.0,
                       target: float | None = None, sims_per_entry: int = 1000, seed: int = 1,
                       on_point: Callable[[Point], None] | None = None) -> list[Point]:
    """Runs OpenSpiel's PSRO with exact best responses and records NashConv after each iteration.

    Args:
        game_name: A two-player zero-sum OpenSpiel game, e.g. ``kuhn_poker`` or ``leduc_poker``.
        iterations: Most PSRO iterations to run.
        time_limit_s: Stop once this much PSRO time (NashConv logging excluded) has passed.
        target: Stop once NashConv is at most this (None: never).
        sims_per_entry: Simulated episodes per meta-game entry.
        seed: Seed of numpy's and Python's global random generators (which PSRO uses).
        on_point: Called with each point as soon as it is recorded.

    Returns:
        The points, starting with iteration 0 (the initial uniform-random population).
    """
    np.random.seed(seed)
    random.seed(seed)
    game = pyspiel.load_game_as_turn_based(game_name, {"players": 2})
    quiet = contextlib.redirect_stdout(io.StringIO())  # PSROSolver prints its settings
    with quiet:
        random_policy = policy.TabularPolicy(game)
        oracle = best_response_oracle.BestResponseOracle(game=game, policy=random_policy)
        agents = [random_policy.__copy__() for _ in range(game.num_players())]
        start = time.perf_counter()
        solver = psro_v2.PSROSolver(
            game, oracle, initial_policies=agents,
            training_strategy_selector="probabilistic", rectifier="",
            sims_per_entry=sims_per_entry, number_policies_selected=1,
            meta_strategy_method="nash", prd_iterations=50000, prd_gamma=1e-10,
            sample_from_marginals=True, symmetric_game=False)
    psro_s = time.perf_counter() - start
    points: list[Point] = []
    for it in range(iterations + 1):
        if it > 0:
            start = time.perf_counter()
            with quiet:
                solver.iteration()
            psro_s += time.perf_counter() - start
        point = Point(it, psro_s, _nash_conv(game, solver))
        points.append(point)
        if on_point is not None:
            on_point(point)
        if (target is not None and point.nash_conv <= target) or psro_s >= time_limit_s:
            break
    return points


def main() -> None:
    """Command line: prints ``iteration  wall_s  nash_conv`` per iteration, then a summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds of PSRO time")
    parser.add_argument("--target", type=float, default=None, help="stop at this NashConv")
    parser.add_argument("--sims-per-entry", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("iteration  wall_s  nash_conv", flush=True)
    start = time.perf_counter()
    points = run_openspiel_psro(
        args.game, iterations=args.iterations, time_limit_s=args.time_limit,
        target=args.target, sims_per_entry=args.sims_per_entry, seed=args.seed,
        on_point=lambda p: print(f"{p.iteration:9d}  {p.wall_s:6.1f}  {p.nash_conv:.4f}",
                                 flush=True))
    total = time.perf_counter() - start
    last = points[-1]
    print(f"# {args.game}: {last.iteration} iterations, NashConv {last.nash_conv:.4f}, "
          f"PSRO {last.wall_s:.1f} s (NashConv logging excluded), total {total:.1f} s "
          "(oracle set-up and logging included)")


if __name__ == "__main__":
    main()
