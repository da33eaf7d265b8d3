"""The league's mixture against its main agent, on games small enough for exact NashConv.

Run: ``python benchmarks/league_mixture.py [--seconds 90] [--seeds 3] [--games kuhn,goofspiel]``.
For each game and seed, in local mode, ``examples/kuhn_league.toml`` (on goofspiel: the same
file with ``env.game`` set to 4 cards and hidden bids) trains in each ``--variants``: ``pfsp``
as shipped (league exploiters draw opponents by PFSP), ``mixture`` with
``roles.league_exploiter.opponents = "mixture"`` (they draw from the league's mixture: best
responses to it), ``magnet`` that and PPO's magnet for every player (``magnet_coef = 0.2``,
``magnet_rate = 0.05``). Main and league exploiters
snapshot every 10 updates, the mixture is solved every 5 s. Printed per run: the main agent's
last NashConv (the evaluator's, exact) and the mixture's (the driver's, exact); then the
medians over seeds. OpenSpiel's own ``nash_conv`` agrees with both measures (tests).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_algorithms import train  # noqa: E402  (the same local run of an example)

GAMES = {"kuhn": [], "goofspiel": [
    'env.game="goofspiel(num_cards=4,imp_info=True,points_order=descending)"']}
COMMON = ["league.mixture.every_s=5", "league.roles.main.snapshot_every_updates=10",
          "league.roles.league_exploiter.snapshot_every_updates=10",
          "services.evaluator.nash_conv_every_s=5"]
VARIANTS = {"pfsp": [], "mixture": ['league.roles.league_exploiter.opponents="mixture"'],
            "magnet": ['league.roles.league_exploiter.opponents="mixture"',
                       "algorithm.magnet_coef=0.2", "algorithm.magnet_rate=0.05"]}


def last(result: dict, player: str) -> float:
    """The last NashConv measured of ``player`` (``league``: the mixture)."""
    return [m for m in result["league"]["nash_conv"] if m["player"] == player][-1]["nash_conv"]


def main() -> None:
    """Every game, variant and seed; one line each, then the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=90.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--games", default="kuhn,goofspiel")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    args = parser.parse_args()
    for game in args.games.split(","):
        for variant in args.variants.split(","):
            sets = VARIANTS[variant]
            mains, mixtures = [], []
            for seed in range(args.seeds):
                result = train("kuhn_league.toml", seed, args.seconds,
                               [*GAMES[game], *COMMON, *sets])
                mains.append(last(result, "main"))
                mixtures.append(last(result, "league"))
                print(f"{game} {variant} seed {seed}: main {mains[-1]:.4f}, mixture "
                      f"{mixtures[-1]:.4f} of {result['league']['mixture']['members']} "
                      "snapshots", flush=True)
            print(f"{game} {variant} median of {args.seeds} after {args.seconds:.0f} s: main "
                  f"{statistics.median(mains):.4f}, mixture {statistics.median(mixtures):.4f}",
                  flush=True)


if __name__ == "__main__":
    main()
