"""Learning curves of leagues on games small enough to solve, each seed checked by OpenSpiel.

Run: ``python benchmarks/learning_quality.py [--games kuhn,goofspiel] [--seeds 3]
[--seconds 180] [--variant magnet]``. For each game and seed, in local mode,
``examples/kuhn_league.toml`` (goofspiel: 4 cards, hidden bids) trains for ``--seconds`` in
the ``--variant`` of ``benchmarks/league_mixture.py`` (``magnet``: league exploiters on the
mixture and PPO's magnet 0.2). Printed: per time, the median (and the range) over seeds of the
newest exact NashConv of the main agent (the evaluator's) and of the league's mixture (the
driver's); then, per seed, the independent check: the final checkpoint's main agent and
mixture written by ``msagent export --format openspiel`` and measured by OpenSpiel's own
``exploitability.nash_conv``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from league_mixture import COMMON, GAMES, VARIANTS  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TIMES = (15, 30, 60, 90, 120, 180, 240, 300, 420, 600)


def msagent(*args: str) -> str:
    """``python -m msagent ARGS`` in local mode; its output (exit on failure)."""
    proc = subprocess.run([sys.executable, "-m", "msagent", *args], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"msagent {args[0]} failed (rc {proc.returncode}):\n"
                         f"{proc.stdout[-1500:]}\n{proc.stderr[-1500:]}")
    return proc.stdout


def train(root: Path, game: str, variant: str, seed: int, seconds: float) -> tuple[Path, dict]:
    """One league; its run directory and its result."""
    out = root / "result.json"
    sets = [f"run.seed={seed}", f"run.root={json.dumps(str(root))}", "logging.progress=false",
            "logging.tensorboard=false", f"run.stop.time_s={seconds}", *GAMES[game], *COMMON,
            *VARIANTS[variant]]
    msagent("train", str(EXAMPLES / "kuhn_league.toml"), "--mode", "local", "--result-json",
            str(out), *sum((["--set", s] for s in sets), []))
    run = next(p for p in root.iterdir() if p.is_dir())
    return run, json.loads(out.read_text())


def curve(result: dict, player: str, seconds: float) -> dict[int | str, float]:
    """The newest NashConv of ``player`` at each of TIMES up to ``seconds`` (after the first
    measure), and at the end (``"end"``: the last, taken as the run stopped)."""
    measures = [m for m in result["league"]["nash_conv"] if m["player"] == player]
    t0 = result["league"]["nash_conv"][0]["time"]
    out: dict[int | str, float] = {
        t: [m["nash_conv"] for m in measures if m["time"] - t0 <= t][-1]
        for t in TIMES if t <= seconds and any(m["time"] - t0 <= t for m in measures)}
    return {**out, "end": measures[-1]["nash_conv"]}


def openspiel_check(run: Path, policy: str) -> float:
    """OpenSpiel's ``nash_conv`` of the run's ``policy`` as ``msagent export`` writes it."""
    from open_spiel.python.algorithms import exploitability

    from msagent.psro.tabular_io import read_policy, to_openspiel

    out = run / f"{policy}.json"
    msagent("export", str(run), "--format", "openspiel", "--policy", policy, str(out))
    return float(exploitability.nash_conv(*to_openspiel(read_policy(out))))


def main() -> None:
    """Every game: its seeds, the curve table, the checks."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="kuhn,goofspiel")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--variant", default="magnet", choices=sorted(VARIANTS))
    args = parser.parse_args()
    for game in args.games.split(","):
        curves: dict[str, list[dict[int | str, float]]] = {"main": [], "league": []}
        checks = []
        for seed in range(args.seeds):
            with tempfile.TemporaryDirectory() as tmp:
                run, result = train(Path(tmp), game, args.variant, seed, args.seconds)
                for player in curves:
                    curves[player].append(curve(result, player, args.seconds))
                checks.append((seed, openspiel_check(run, "main"),
                               openspiel_check(run, "league")))
        print(f"\n{game}, {args.variant}, {args.seeds} seeds, {args.seconds:.0f} s")
        print("| seconds | main agent: median (range) | league mixture: median (range) |")
        print("|---|---|---|")
        for t in [*TIMES, "end"]:
            cells = []
            for player in curves:
                values = [c[t] for c in curves[player] if t in c]
                cells.append(f"{statistics.median(values):.3f} ({min(values):.3f}-"
                             f"{max(values):.3f})" if len(values) == args.seeds else "–")
            if any(c != "–" for c in cells):
                print(f"| {t} | {cells[0]} | {cells[1]} |")
        for seed, main, mixture in checks:
            print(f"seed {seed}: OpenSpiel's nash_conv of the final checkpoint's export: main "
                  f"{main:.4f}, league mixture {mixture:.4f}")


if __name__ == "__main__":
    main()
