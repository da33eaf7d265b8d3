"""Two-player Atari Boxing league benchmark: the emulator's rate, training's, and learning.

Run: ``python benchmarks/boxing.py [--minutes 8] [--raw-s 20] [--eval-games 8]``.

1. Raw rate (in this process, no Ray, no network): ``--envs`` games of
   ``examples/boxing/boxing_env.py`` (the same wrappers as training: 4 frames per decision,
   grayscale, 84x84, 4 stacked frames, the seat plane) stepped with random actions in both
   seats; env steps/s (one step = both seats' decisions = 4 emulator frames).
2. Training: ``msagent train examples/boxing_league.toml`` on the embedded Ray for
   ``--minutes``; its env steps/s overall (start-up included) and once acting (between the
   first progress line with env steps and the last), and the latter's ratio to the raw
   rate. The evaluator's win rates against the random bot are printed as the progress lines
   report them.
3. The curve: the main agent's snapshots (``RUN_DIR/snapshots/main@V``, every 20 updates) each
   play ``--eval-games`` full games against the random bot afterwards (seats alternating,
   sampled actions, as the evaluator plays), so the figures do not take CPU from training:
   mean return (punches landed minus taken) and win rate against the minute the snapshot was
   taken.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from train_proc import train_lines  # noqa: E402
EXAMPLE = ROOT / "examples" / "boxing_league.toml"
ENV_SCRIPT = ROOT / "examples" / "boxing" / "boxing_env.py"
AGENT_SCRIPT = ROOT / "examples" / "boxing" / "boxing_agent.py"
BOTS = ROOT / "examples" / "boxing" / "bots"
EVAL = re.compile(r"eval/(bot:\w+)/seat(\d)=([\d.]+)\((\d+)\)")
STEPS = re.compile(r"steps=(\d+) steps/s=(\d+)")
SNAPSHOT = re.compile(r"main@(\d+)\.safetensors")


def raw_rate(seconds: float, envs: int, seed: int = 0) -> float:
    """Env steps/s of ``envs`` wrapped boxing games under random actions in both seats."""
    from msagent.user_scripts import game_factory

    make = game_factory(str(ENV_SCRIPT), {})
    games = [make() for _ in range(envs)]
    turns = [g.reset(seed=seed + i) for i, g in enumerate(games)]
    rng, steps = np.random.default_rng(seed), 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i, game in enumerate(games):
            actions = {s: int(a) for s, a in zip(turns[i].to_act,
                                                 rng.integers(18, size=len(turns[i].to_act)))}
            turns[i] = game.step(actions)
            if turns[i].done:
                turns[i] = game.reset()
        steps += envs
    rate = steps / (time.perf_counter() - start)
    for game in games:
        game.close()
    return rate


def train(minutes: float, root: Path, overrides: list[str]) -> tuple[dict, Path, float, float]:
    """Run the league example; (its result JSON, its run directory, its start time, its env
    steps/s between the first progress line with steps and the last one)."""
    result_json = root / "result.json"
    extra = ("--set", f"run.root={json.dumps(str(root))}", "--result-json", str(result_json))
    start, points = time.time(), []
    for _, line in train_lines(EXAMPLE, minutes, overrides, 30.0, extra):
        steps = STEPS.search(line)
        if steps:
            now = time.time()
            if int(steps[1]) > 0:
                points.append((now, int(steps[1])))
            evals = " ".join(f"{o} seat {s}: {float(r):.0%} of {g}"
                             for o, s, r, g in EVAL.findall(line))
            print(f"  {(now - start) / 60:5.1f} min  {int(steps[1]):>9,} steps  "
                  f"{int(steps[2]):>5} steps/s  {evals}", flush=True)
    (run_dir,) = [p for p in root.iterdir() if p.is_dir()]
    steady = ((points[-1][1] - points[0][1]) / (points[-1][0] - points[0][0])
              if len(points) > 1 else float("nan"))
    return json.loads(result_json.read_text()), run_dir, start, steady


def curve(run_dir: Path, start: float, games: int, points: int, seed: int = 0,
          opponent: str = "random", versions: list[int] | None = None) -> list[dict]:
    """Mean return and win rate of up to ``points`` main snapshots (or exactly ``versions``)
    against ``opponent``, with the run's own env parameters (``--set env.size=42`` changes the
    network's shape)."""
    from msagent.config.loader import load_config
    from msagent.rundir import RunDir
    from msagent.user_scripts import build_policy, game_factory
    from msagent.vocabulary import ModelKey

    files = dict(sorted((int(m[1]), p) for p in (run_dir / "snapshots").iterdir()
                        if (m := SNAPSHOT.fullmatch(p.name))))
    picks = _picks(list(files), points, versions)
    bot = _bot(opponent)  # loaded once; play_against seeds it for every point
    cfg = load_config(run_dir / "config.toml")
    policy = build_policy(cfg.scripts.env, cfg.scripts.agent, cfg.env, 0)  # its sampling seed
    make = game_factory(cfg.scripts.env, cfg.env)
    snapshots = RunDir(run_dir).snapshots
    out = []
    for version in picks:
        policy.set_weights(snapshots.load(ModelKey("main", version)))
        policy.invalidate_cache()
        returns = np.asarray(play_against(policy, make, games, seed, bot))
        out.append({"minutes": (files[version].stat().st_mtime - start) / 60, "version": version,
                    "opponent": opponent, "mean_return": float(returns.mean()),
                    "se": float(returns.std(ddof=1) / np.sqrt(games)) if games > 1 else 0.0,
                    "seat_means": [float(returns[s::2].mean()) for s in (0, 1) if games > s],
                    "win_rate": float(np.mean(returns > 0)),
                    "draw_rate": float(np.mean(returns == 0)), "games": games})
        print(_row(out[-1]), flush=True)
    return out


def _run_start(run_dir: Path) -> float:
    """When a finished run started: its config's time, or its first snapshot's if earlier (a
    resume writes the config again)."""
    first = run_dir / "snapshots" / "main@1.safetensors"
    config = (run_dir / "config.toml").stat().st_mtime
    return min(config, first.stat().st_mtime) if first.exists() else config


def _picks(found: list[int], points: int, versions: list[int] | None) -> list[int]:
    """The snapshot versions to evaluate: ``versions`` as given (each must exist), else up to
    ``points`` spread evenly from the first snapshot to the last."""
    if versions:
        missing = sorted(set(versions) - set(found))
        if missing:
            raise SystemExit(f"no snapshot main@V for V in {missing}; the run has "
                             f"{found[:3]}...{found[-3:]}")
        return versions
    if not found:
        raise SystemExit("the run has no main@V snapshots to evaluate")
    return [found[i] for i in sorted({round(i) for i in
                                      np.linspace(0, len(found) - 1, min(points, len(found)))})]


def _bot(opponent: str):
    """``None`` for the uniform-random opponent, else the bot script: a name from
    ``examples/boxing/bots`` (``sparring``) or a path to a bot script."""
    from msagent.user_scripts import load_script

    if opponent == "random":
        return None
    path = Path(opponent) if opponent.endswith(".py") else BOTS / f"{opponent}_bot.py"
    if not path.is_file():
        raise SystemExit(f"--opponent {opponent!r}: no bot script {path} (names: "
                         f"{sorted(p.stem[:-4] for p in BOTS.glob('*_bot.py'))})")
    return load_script(str(path))


def play_against(policy, make, games: int, seed: int, bot=None) -> list[float]:
    """``games`` whole games side by side, the policy in seat ``g % 2`` of game ``g`` (one
    batched act per step) against ``bot`` (a uniformly random opponent when ``None``); game
    ``g`` is reset with seed ``seed + g``; the policy's returns."""
    from msagent.envs.multi_agent import points

    rng = np.random.default_rng(seed)
    if bot is not None and hasattr(bot, "seed"):
        bot.seed(seed)
    envs = [make() for _ in range(games)]
    turns = [env.reset(seed=seed + g) for g, env in enumerate(envs)]
    returns = np.zeros(games)
    live = list(range(games))
    while live:
        obs = np.stack([turns[g].obs[g % 2] for g in live])
        actions = policy.act(obs, None, deterministic=False).actions
        for g, action in zip(live, actions.tolist()):
            other = 1 - g % 2
            theirs = (int(rng.integers(18)) if bot is None
                      else int(bot.act(turns[g].obs[other], None)))
            turns[g] = envs[g].step({g % 2: int(action), other: theirs})
            returns[g] += points(turns[g])[g % 2]  # the game's, not clipped rewards
        live = [g for g in live if not turns[g].done]
    for env in envs:
        env.close()
    return returns.tolist()


def _row(point: dict) -> str:
    """One line of the learning curve."""
    seats = " / ".join(f"{m:+.1f}" for m in point["seat_means"])
    return (f"  {point['minutes']:5.1f} min  main@{point['version']:<4d} vs "
            f"{point['opponent']}: mean return {point['mean_return']:+6.1f} (se "
            f"{point['se']:.1f}; seat 0 / 1: {seats}), win {point['win_rate']:4.0%}, draw "
            f"{point['draw_rate']:4.0%} ({point['games']} games)")


def main() -> None:
    """Raw rate first (a quiet machine), then training, then the curve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=8.0)
    parser.add_argument("--raw-s", type=float, default=20.0)
    parser.add_argument("--envs", type=int, default=16, help="games of the raw-rate loop")
    parser.add_argument("--eval-games", type=int, default=8)
    parser.add_argument("--eval-points", type=int, default=4,
                        help="snapshots evaluated (each 8 full games take minutes on 2 cores)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        help="a config override for the training run, as msagent train --set")
    parser.add_argument("--curve-only", type=Path, default=None, metavar="RUN_DIR",
                        help="only evaluate the snapshots of an earlier run's directory")
    parser.add_argument("--opponent", default="random",
                        help="the curve's opponent: random (uniform actions), a bot name from "
                        "examples/boxing/bots (sparring, attacker) or a bot script's path")
    parser.add_argument("--eval-seed", type=int, default=0,
                        help="game g of each point is reset with seed EVAL_SEED + g and the "
                        "opponent's random numbers start from EVAL_SEED (the policy's sampling "
                        "always from 0)")
    parser.add_argument("--versions", type=int, nargs="+", default=None, metavar="V",
                        help="with --curve-only: evaluate exactly these main@V snapshots")
    parser.add_argument("--keep", action="store_true",
                        help="keep the training run's directory (snapshots, logs) at the end")
    args = parser.parse_args()
    if args.curve_only is not None:
        curve(args.curve_only, _run_start(args.curve_only), args.eval_games,
              args.eval_points, args.eval_seed, args.opponent, args.versions)
        return
    if args.versions:
        parser.error("--versions needs --curve-only RUN_DIR")
    raw = raw_rate(args.raw_s, args.envs)
    print(f"raw emulator rate ({args.envs} games, random actions, both seats, same wrappers): "
          f"{raw:,.0f} env steps/s ({raw * 4:,.0f} frames/s); load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    root = Path(tempfile.mkdtemp(prefix="boxing_bench_"))
    print(f"training: msagent train examples/boxing_league.toml for {args.minutes} min (runs "
          f"under {root})", flush=True)
    result, run_dir, start, steady = train(args.minutes, root, args.overrides)
    overall = result["env_steps"] / result["elapsed_s"]
    print(f"training: {result['env_steps']:,} env steps in {result['elapsed_s']:.0f} s = "
          f"{overall:,.0f} env steps/s overall, {steady:,.0f} env steps/s once acting (first to "
          f"last progress line); ratio to the raw rate {steady / raw:.2f}; updates "
          f"{ {p: v['updates'] for p, v in result['league']['players'].items()} }, "
          f"{result['dropped_fragments']} stale fragments dropped, {result.get('episodes', 0)} "
          f"training games ended; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"curve: main's snapshots against {args.opponent}, {args.eval_games} full games "
          "each (seats alternating, sampled actions)", flush=True)
    curve(run_dir, start, args.eval_games, args.eval_points, args.eval_seed, args.opponent)
    if args.keep:
        print(f"kept the run: {run_dir} (--curve-only {run_dir} evaluates it again)")
    else:
        shutil.rmtree(root, ignore_errors=True)

if __name__ == "__main__":
    main()
