"""PSRO benchmark: msagent's PSRO against OpenSpiel's own ``psro_v2``, NashConv against time.

Run: ``python benchmarks/psro.py [--game leduc_poker] [--target 0.74] [--seed 1]``
(needs ``pip install -e .[bench]`` for OpenSpiel's Nash solver, cvxpy).

Both use exact best responses and the Nash meta-solver, from a uniform-random first member.
OpenSpiel's ``psro_v2`` (as its ``psro_v2_example.py --oracle_type=BR``) estimates each
meta-game entry from 1000 sampled games; msagent computes entries by tree traversal. Both
clocks exclude the NashConv logging of OpenSpiel's loop; msagent's clock includes its own
NashConv, computed every iteration. It prints one line per iteration of each, then the time
each took to reach ``--target`` and the ratio (target: msagent at most half of OpenSpiel's).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from psro_openspiel import Point, run_openspiel_psro  # noqa: E402

from msagent.psro.exact_oracle import (ExactEvaluator, ExactOracle,  # noqa: E402
                                       TabularMembers, mixture_nash_conv)
from msagent.psro.game_tree import build_tree  # noqa: E402
from msagent.psro.loop import PSRO  # noqa: E402
from msagent.psro.meta_solvers import make_solver  # noqa: E402


def run_msagent_psro(game: str, iterations: int, time_limit_s: float,
                     target: float | None) -> list[Point]:
    """msagent's PSRO with the exact oracle; one point per iteration (tree build included)."""
    start = time.perf_counter()
    tree = build_tree(game)
    members = TabularMembers(tree)
    psro = PSRO(ExactOracle(members), ExactEvaluator(members), make_solver("nash"),
                mixture_nash_conv(members), time.perf_counter() - start)
    state = psro.start(tree.num_players, symmetric=False)
    points = [_point(state.history[-1])]
    while (points[-1].iteration < iterations and points[-1].wall_s < time_limit_s
           and (target is None or points[-1].nash_conv > target)):
        points.append(_point(psro.step(state)))
        _show("msagent", points[-1])
    return points


def _point(record) -> Point:
    """A curve point from an iteration record."""
    return Point(record.iteration, record.wall_s, float(record.nash_conv))


def _show(who: str, point: Point) -> None:
    """One progress line."""
    print(f"{who:9s} iteration {point.iteration:4d}  {point.wall_s:8.2f} s  "
          f"NashConv {point.nash_conv:.4f}", flush=True)


def time_to(points: list[Point], target: float) -> float | None:
    """Seconds until NashConv first reached ``target`` (None: never)."""
    return next((p.wall_s for p in points if p.nash_conv <= target), None)


def main() -> None:
    """Run both, print the curves and the time-to-target ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--target", type=float, default=0.74)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--oracle", choices=["exact", "rl"], default="exact")
    args = parser.parse_args()
    if args.oracle == "rl":
        sys.exit("--oracle rl: the RL oracle is not available in this version")
    ours = run_msagent_psro(args.game, args.iterations, args.time_limit, args.target)
    theirs = run_openspiel_psro(args.game, iterations=args.iterations,
                                time_limit_s=args.time_limit, target=args.target,
                                seed=args.seed, on_point=lambda p: _show("openspiel", p))
    mine, ref = time_to(ours, args.target), time_to(theirs, args.target)
    print(f"\n{args.game}: NashConv <= {args.target} after")
    for who, t, pts in (("msagent", mine, ours), ("openspiel", ref, theirs)):
        reached = f"{t:.2f} s" if t is not None else "never"
        print(f"  {who:9s} {reached} ({pts[-1].iteration} iterations, last NashConv "
              f"{pts[-1].nash_conv:.4f})")
    if mine is not None and ref is not None:
        print(f"  msagent / openspiel time: {mine / ref:.3f} (target <= 0.5)")


if __name__ == "__main__":
    main()
