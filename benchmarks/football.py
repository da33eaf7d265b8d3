"""Google Research Football benchmark: simulator rate, training rate, learning curves.

Needs the football venv (``bash scripts/setup_football.sh``). Two modes:

``python benchmarks/football.py academy [--minutes 5] [--sim-s 20]``
    1. The raw simulator rate: one ``FootballEnv`` of the academy example's scenario and
       representation stepped with uniformly random actions for ``--sim-s`` seconds (child
       process and pipes included, as training sees it), env steps/s.
    2. ``msagent train examples/football_academy.toml`` for ``--minutes`` (embedded Ray), its
       env steps/s, the ratio to the raw rate (target >= 0.5x), and the learning curve: the
       share of the last 100 episodes that scored (the mean return), against wall time.

``python benchmarks/football.py league-curve RUN_DIR [--games 4] [--every 1]``
    The 5v5 league's main-agent snapshots (``RUN_DIR/snapshots/main@V``, with the minutes since
    the first was written) each play ``--games``
    full 5_vs_5 games as the left side's controlled player against gfootball's built-in AI
    (the whole right side): goals for and against, and wins/draws/losses per snapshot.
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

from train_proc import train_lines  # noqa: E402
ACADEMY = ROOT / "examples" / "football_academy.toml"
PROGRESS = re.compile(r"steps=(\d+) steps/s=(\d+) episodes=(\d+) return=(\S+)")


def simulator_rate(seconds: float, scenario: str, representation: str) -> dict[str, float]:
    """Env steps/s of one FootballEnv with random actions (resets included)."""
    from msagent.envs.games.football import FootballEnv

    env = FootballEnv(scenario, representation=representation)
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        steps, episodes, start = 0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            turn = env.step({0: int(rng.integers(19))})
            steps += 1
            if turn.done:
                episodes += 1
                env.reset()
        elapsed = time.perf_counter() - start
    finally:
        env.close()
    return {"steps_per_s": steps / elapsed, "steps": steps, "episodes": episodes}


def train_curve(minutes: float, overrides: list[str]) -> tuple[list[dict], dict]:
    """Train the academy example; its progress points and the final result."""
    import json
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="football_bench_")) / "result.json"
    curve = []
    for at, line in train_lines(ACADEMY, minutes, overrides, 15.0, ("--result-json", str(out))):
        found = PROGRESS.search(line)
        if found is None:
            continue
        steps, rate, episodes, mean = found.groups()
        point = {"minutes": at, "steps": int(steps), "steps_per_s": int(rate),
                 "episodes": int(episodes), "score_rate": None if mean == "-" else float(mean)}
        curve.append(point)
        print(_row(point), flush=True)
    return curve, json.loads(out.read_text())


def _row(point: dict) -> str:
    """One line of the learning curve."""
    rate = "-" if point["score_rate"] is None else f"{point['score_rate']:.0%}"
    return (f"{point['minutes']:6.1f} min | {point['steps']:>9,} steps | "
            f"{point['steps_per_s']:>5} steps/s | {point['episodes']:>6,} episodes | "
            f"scored (last 100) {rate}")


def academy(args: argparse.Namespace) -> None:
    """The raw rate, then training: its rate, the ratio and the curve."""
    import tomllib

    env = tomllib.loads(ACADEMY.read_text())["env"]
    sim = simulator_rate(args.sim_s, env["scenario"], env["representation"])
    print(f"simulator: {env['scenario']} ({env['representation']}), one env, random actions: "
          f"{sim['steps_per_s']:,.0f} env steps/s ({sim['steps']:,} steps, "
          f"{sim['episodes']} episodes)", flush=True)
    if args.minutes <= 0:
        return
    curve, result = train_curve(args.minutes, args.overrides)
    rate = result["env_steps"] / max(result["elapsed_s"], 1e-9)
    print(f"training: {result['env_steps']:,} env steps in {result['elapsed_s']:.0f} s = "
          f"{rate:,.0f} env steps/s = {rate / sim['steps_per_s']:.2f}x the simulator "
          f"(target >= 0.5x); {result['updates']} updates, {result['episodes']:,} episodes; "
          f"stopped by {result['stop_reason']}; final score rate {result['mean_return']}")
    hit = next((p for p in curve if (p["score_rate"] or 0) >= 0.9 and p["episodes"] >= 100),
               None)
    print("target 90% scoring (last 100 episodes): " + (
        f"reached after {hit['minutes']:.1f} min, {hit['steps']:,} steps" if hit else
        "not reached"))


def league_curve(args: argparse.Namespace) -> None:
    """Each main snapshot of a 5v5 league run against the built-in AI."""
    from safetensors.numpy import load_file

    from msagent.config import load_config
    from msagent.envs.games.football import FootballEnv
    from msagent.user_scripts import build_policy

    run = Path(args.run_dir)
    cfg = load_config(run / "config.toml", [])
    files = sorted((run / "snapshots").glob("main@*.safetensors"),
                   key=lambda p: int(p.stem.split("@")[1]))[::args.every]
    if not files:
        raise SystemExit(f"no main snapshots in {run / 'snapshots'}")
    params = dict(cfg.env)
    policy = build_policy(str(cfg.scripts.env), str(cfg.scripts.agent), params, 0)
    env = FootballEnv(params.get("scenario", "5_vs_5"), params.get("representation",
                      "simple115v2"), "scoring", left_players=1, right_players=0)
    start = min(p.stat().st_mtime for p in files)
    try:
        for path in files:
            policy.set_weights(load_file(str(path)))
            policy.invalidate_cache()
            goals = [_game(env, policy, seed) for seed in range(args.games)]
            diff = [f - a for f, a in goals]
            wins, draws = sum(d > 0 for d in diff), sum(d == 0 for d in diff)
            print(f"{path.stem} (written at +{(path.stat().st_mtime - start) / 60:4.1f} min): "
                  f"{args.games} games vs built-in AI: goals "
                  f"{sum(f for f, _ in goals)}-{sum(a for _, a in goals)}, mean difference "
                  f"{np.mean(diff):+.2f}, W/D/L {wins}/{draws}/{len(diff) - wins - draws}",
                  flush=True)
    finally:
        env.close()


def _game(env, policy, seed: int) -> tuple[int, int]:
    """One full game of ``policy`` as the left player: (goals for, goals against)."""
    turn, scored, conceded = env.reset(seed=seed), 0, 0
    while not turn.done:
        action = int(policy.act(turn.obs[0][None], None, False).actions[0])
        turn = env.step({0: action})
        scored += int(turn.rewards[0] > 0)
        conceded += int(turn.rewards[0] < 0)
    return scored, conceded


def main() -> None:
    """Parse the mode and run it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    one = modes.add_parser("academy", help="simulator rate, training rate, learning curve")
    one.add_argument("--minutes", type=float, default=5.0)
    one.add_argument("--sim-s", type=float, default=20.0)
    one.add_argument("--set", dest="overrides", action="append", default=[],
                     help="a config override for the training run, as msagent train --set")
    two = modes.add_parser("league-curve", help="5v5 league snapshots vs the built-in AI")
    two.add_argument("run_dir")
    two.add_argument("--games", type=int, default=4)
    two.add_argument("--every", type=int, default=1, help="evaluate every N-th snapshot")
    args = parser.parse_args()
    academy(args) if args.mode == "academy" else league_curve(args)


if __name__ == "__main__":
    main()
