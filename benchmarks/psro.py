"""PSRO benchmark: msagent's PSRO against OpenSpiel's own ``psro_v2``, NashConv against time.

Run: ``python benchmarks/psro.py [--game leduc_poker] [--target 0.74] [--seed 1]``
(needs ``pip install -e .[bench]`` for OpenSpiel's Nash solver, cvxpy), or
``python benchmarks/psro.py --oracle rl --game kuhn_poker [--seeds 0 1 2]``: the RL oracle
through ``msagent train examples/<game>_psro_rl.toml`` per seed, NashConv against training
episodes, median over the seeds at the budget (Kuhn 1M episodes, target 0.04; Leduc 2.5M,
target 0.8).

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent))
if TYPE_CHECKING:  # OpenSpiel's psro_v2 needs cvxpy, which the RL oracle's runs do not
    from psro_openspiel import Point

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
    from psro_openspiel import Point

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
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="--oracle rl: the seeds (the median is reported)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="--oracle rl: extra config overrides")
    parser.add_argument("--parallel", action="store_true",
                        help="--oracle rl: run the seeds at once (the budget is in training "
                             "games, not time: slower runs, same curves)")
    args = parser.parse_args()
    if args.oracle == "rl":  # needs no OpenSpiel meta-solver (cvxpy)
        return rl_main(args)
    from psro_openspiel import run_openspiel_psro

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


RL_RUNS = {"kuhn_poker": ("kuhn_psro_rl.toml", 1_000_000, 0.04),
           "leduc_poker": ("leduc_psro_rl.toml", 2_500_000, 0.8)}
"""Game -> example config, training-episode budget and NashConv target of the RL benchmark."""
RL_TIME_S = 14_400
"""Each RL seed's time stop: generous, so that seeds run side by side (slower) still reach the
budget in games; ``--set run.stop.time_s=...`` overrides it."""


def run_rl_seed(game: str, seed: int, extra: list[str]) -> list[tuple[int, float]]:
    """One ``msagent train`` of the RL example; (training episodes, NashConv) per iteration."""
    import json
    import subprocess
    import tempfile

    config, budget, target = RL_RUNS[game]
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "msagent", "train", str(root / "examples" / config),
               "--set", f"run.seed={seed}", "--set", f"run.root={json.dumps(tmp)}",
               "--set", f"league.psro.nash_conv={target}", "--set", "logging.progress=false",
               "--set", f"run.stop.time_s={RL_TIME_S}",  # the budget is games, not time
               *[a for kv in extra for a in ("--set", kv)], "--result-json", str(out)]
        # each iteration's line is printed as it comes (seeds run for tens of minutes)
        with open(Path(tmp) / "stderr.txt", "w+") as err, subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=err, text=True) as proc:
            for line in proc.stdout:
                if line.startswith("psro iteration"):
                    print(f"seed {seed}: {line.rstrip()}", flush=True)
            proc.wait()
            err.seek(0)
            if proc.returncode != 0:
                raise SystemExit(f"seed {seed} failed (rc {proc.returncode}):\n"
                                 f"{err.read()[-2000:]}")
        curve = json.loads(out.read_text())["psro"]["curve"]
    return [(int(e), float(nc)) for _, e, nc in curve if nc is not None]


def rl_main(args: argparse.Namespace) -> None:
    """Each seed's NashConv against training episodes; the median at the budget."""
    import numpy as np

    config, budget, target = RL_RUNS[args.game]
    finals, reached = [], []
    with ThreadPoolExecutor(len(args.seeds) if args.parallel else 1) as pool:
        curves = list(pool.map(lambda seed: run_rl_seed(args.game, seed, args.set), args.seeds))
    for curve in curves:
        within = [nc for e, nc in curve if e <= budget]
        finals.append(within[-1] if within else float("nan"))
        reached.append(next((e for e, nc in curve if nc <= target), None))
    print(f"\n{args.game}, RL oracle (PPO), {len(args.seeds)} seeds: NashConv at "
          f"{budget:,} training episodes (evaluation entries are exact, no games): "
          f"{', '.join(f'{x:.4f}' for x in finals)}; median {float(np.median(finals)):.4f} "
          f"(target <= {target})")
    print("training episodes to reach the target: "
          + ", ".join(f"{e:,}" if e is not None else "not reached" for e in reached))


if __name__ == "__main__":
    main()
