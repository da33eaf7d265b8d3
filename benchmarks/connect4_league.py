"""Connect Four league benchmark: learning against wall time, and league throughput.

Run: ``python benchmarks/connect4_league.py [--minutes 30] [--throughput-s 20]``.

1. Throughput (in this process, no Ray): one env worker's loop (``MatchCollector`` over 32
   games, one batched act per step) with the main agent's network in every seat (plain
   self-play) and with its opponents drawn from a pool of 24 frozen snapshots served by the
   worker's LRU policy cache (32 policies) and match queue (each draw played as many games in
   a row as the example's ``games_per_draw``, seats alternating), alternated A/B/A/B, with the
   example's agent; it prints env
   steps/s of both and the ratio (target: league >= 0.8x self-play).
2. Learning: ``msagent train examples/connect4_league.toml`` on the embedded Ray for
   ``--minutes``; from its progress lines it prints, against wall time, the main agent's win
   rate against the random bot and the one-step-lookahead bot from each seat, with the number
   of evaluation games behind each figure (the newest 200 per opponent and seat), and when
   each target (99% against random, 90% against lookahead, in both seats) was first reached.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from msagent.config.schema import TrainConfig  # noqa: E402
from train_proc import train_lines  # noqa: E402

EXAMPLE = ROOT / "examples" / "connect4_league.toml"
TARGETS = {"bot:random": 0.99, "bot:lookahead": 0.90}
EVAL = re.compile(r"eval/(bot:\w+)/seat(\d)=([\d.]+)\((\d+)\)")


def throughput(seconds: float, cfg: TrainConfig, snapshots: int = 24, envs: int = 32,
               cache: int = 32) -> dict[str, float]:
    """Env steps/s of self-play and of play against a pool of frozen snapshots, with the
    worker's match queue (each draw played ``games_per_draw`` times) and policy cache."""
    from msagent.envs.collector import Acted
    from msagent.envs.match_collector import MatchCollector
    from msagent.policy.cache import PolicyCache
    from msagent.services.env_worker.league_client import MatchQueue
    from msagent.user_scripts import build_policy, game_factory
    from msagent.vocabulary import Match, ModelKey, PolicyRef

    env, agent = str(cfg.scripts.env), str(cfg.scripts.agent)  # the learning run's own scripts
    env_kwargs = dict(cfg.env)
    repeat = cfg.services.env_worker.games_per_draw
    main = build_policy(env, agent, env_kwargs, 0)
    rng = np.random.default_rng(0)
    pool = {ModelKey("main", v): {k: w + rng.normal(0, 0.01, w.shape).astype(w.dtype)
                                  for k, w in main.get_weights().items()}
            for v in range(1, snapshots + 1)}
    cache = PolicyCache(lambda: build_policy(env, agent, env_kwargs, 0), pool.__getitem__, cache)

    def act(groups):
        out = {}
        for ref, (obs, masks, _states) in groups.items():
            if ref.kind == "player":
                acted = main.act(obs, masks)
            else:  # as msagent.services.env_worker.acting: a frozen seat needs no values
                acted = cache.get(ref.key).act(obs, masks, values=False)
            out[ref] = Acted(acted, ModelKey(ref.name, ref.version))
        return out

    keys = list(pool)

    def draw(player: str, n: int) -> list[Match]:
        """What the league hands out: a uniform opponent from the pool, a random seat."""
        out = []
        for _ in range(n):
            seat = int(rng.integers(2))
            seats = [PolicyRef.snapshot(keys[int(rng.integers(len(keys)))])] * 2
            seats[seat] = PolicyRef.player(player)
            out.append(Match(tuple(seats), seat))
        return out

    league_match = MatchQueue(["main"] * envs, draw, 16, repeat)

    def self_play(k: int) -> Match:
        return Match((PolicyRef.player("main"),) * 2, int(rng.integers(2)))

    make = game_factory(env, env_kwargs)
    rates: dict[str, list[float]] = {"self-play": [], "league": []}
    for _ in range(2):
        for name, matches in (("self-play", self_play), ("league", league_match)):
            collector = MatchCollector([make() for _ in range(envs)], act, matches, 16, 0)
            start, steps = time.perf_counter(), 0
            while time.perf_counter() - start < seconds / 2:
                collector.collect()
                steps += envs * 16
            rates[name].append(steps / (time.perf_counter() - start))
    out = {name: float(np.mean(r)) for name, r in rates.items()}
    out["cache_misses"], out["games_per_draw"] = cache.misses, repeat
    return out


def learn(minutes: float, overrides: list[str], config: Path = EXAMPLE) -> list[dict]:
    """Train the league example; the evaluation figures of each progress line, with time."""
    curve = []
    for at, line in train_lines(config, minutes, overrides):
        found = EVAL.findall(line)
        if not found:
            continue
        point = {"minutes": at, "steps": int(re.search(r"steps=(\d+)", line).group(1))}
        for opponent, seat, rate, games in found:
            point[(opponent, int(seat))] = (float(rate), int(games))
        curve.append(point)
        print(_row(point), flush=True)
    return curve


def _row(point: dict) -> str:
    """One line of the learning curve."""
    cells = [f"{point['minutes']:6.1f} min", f"{point['steps']:>11,} steps"]
    for opponent in TARGETS:
        for seat in (0, 1):
            rate, games = point.get((opponent, seat), (float("nan"), 0))
            cells.append(f"{opponent} seat {seat}: {rate:6.1%} ({games:3d})")
    return " | ".join(cells)


def reached(curve: list[dict]) -> dict[str, float | None]:
    """The first time (minutes) each target held in both seats with 200 games behind it."""
    out: dict[str, float | None] = {}
    for opponent, target in TARGETS.items():
        out[opponent] = next((p["minutes"] for p in curve if all(
            p.get((opponent, s), (0, 0))[0] >= target and p.get((opponent, s))[1] >= 200
            for s in (0, 1))), None)
    return out


def main() -> None:
    """Throughput first (a quiet machine), then the learning run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--throughput-s", type=float, default=20.0)
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        help="a config override for the learning run, as msagent train --set")
    parser.add_argument("--config", type=Path, default=EXAMPLE,
                        help="the league config of the learning run (default: the example)")
    args = parser.parse_args()
    if args.throughput_s > 0:
        from msagent.config.loader import load_config

        cfg = load_config(args.config.resolve(), args.overrides)  # as the learning run
        t = throughput(args.throughput_s, cfg)
        print(f"agent {cfg.scripts.agent}, env {dict(cfg.env) or 'as given'}", flush=True)
        print(f"throughput, one env worker loop, 32 games: self-play {t['self-play']:,.0f} "
              f"env steps/s; league (24 frozen snapshots, each draw played "
              f"{t['games_per_draw']} times, LRU cache of 32, {t['cache_misses']} misses) "
              f"{t['league']:,.0f} env steps/s = {t['league'] / t['self-play']:.2f}x (target >= 0.8x)",
              flush=True)
    if args.minutes > 0:
        curve = learn(args.minutes, args.overrides, args.config.resolve())
        for opponent, when in reached(curve).items():
            where = f"after {when:.1f} min" if when is not None else "not reached"
            print(f"target {TARGETS[opponent]:.0%} against {opponent} in both seats: {where}")


if __name__ == "__main__":
    main()
