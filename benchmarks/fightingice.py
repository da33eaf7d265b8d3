"""FightingICE league benchmark: the main agent's win rate and mean HP difference against a
random bot, against wall time.

Run: ``FIGHTINGICE_HOME=... python benchmarks/fightingice.py [--minutes 30] [--rounds 20]
[--fake]``. It trains ``examples/fightingice_league.toml`` (``msagent train``, local mode) for
the given time, then plays snapshots of the main agent (the league writes them to
``RUN_DIR/snapshots/`` as it goes, each stamped with its file time) against
``examples/fightingice/bots/random_bot.py`` for ``--rounds`` rounds each, seats alternating,
and prints one line per snapshot: minutes since the run started, rounds won, mean HP
difference at round end (the agent's HP minus the bot's).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from msagent.rundir.snapshots import SnapshotFiles
from msagent.user_scripts import build_policy
from msagent.vocabulary import ModelKey

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "fightingice_league.toml"
ENV_SCRIPT = REPO / "examples" / "fightingice" / "fightingice_env.py"
AGENT_SCRIPT = REPO / "examples" / "fightingice" / "fightingice_agent.py"


def train(minutes: float, root: Path, fake: bool) -> Path:
    """Run the league for ``minutes``; its run directory."""
    cmd = [sys.executable, "-m", "msagent", "train", str(EXAMPLE), "--mode", "local",
           "--set", f"run.stop.time_s={minutes * 60:.0f}", "--set",
           f"run.root={json.dumps(str(root))}", "--set", "logging.progress=false"]
    if fake:
        cmd += ["--set", "env.fake=true"]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    subprocess.run(cmd, check=True, env=env, cwd=REPO)
    (run_dir,) = [p for p in root.iterdir() if p.is_dir()]
    return run_dir


def play(policy, rounds: int, fake: bool, seed: int = 0) -> tuple[int, float]:
    """Rounds won by ``policy`` against the random bot, and its mean HP difference."""
    sys.path.insert(0, str(ENV_SCRIPT.parent))
    from fightingice_env import make_env  # noqa: PLC0415 (the example's own settings)

    env = make_env(fake=fake or None)
    rng = np.random.default_rng(seed)
    wins, diffs = 0, []
    try:
        for r in range(rounds):
            me = r % 2
            turn = env.reset()
            while not turn.done:
                actions = {}
                for s in turn.to_act:
                    if s == me:
                        out = policy.act(turn.obs[s][None], turn.masks[s][None], True)
                        actions[s] = int(out.actions[0])
                    else:
                        actions[s] = int(rng.choice(np.flatnonzero(turn.masks[s])))
                turn = env.step(actions)
            hp = env.round_results[-1]
            diffs.append(hp[me] - hp[1 - me])
            wins += hp[me] > hp[1 - me]
    finally:
        env.close()
    return wins, float(np.mean(diffs))


def curve(run_dir: Path, rounds: int, fake: bool, points: int) -> None:
    """Evaluate up to ``points`` main snapshots spread over the run; print the curve."""
    files = SnapshotFiles(run_dir / "snapshots")
    found = sorted((int(p.stem.split("@")[1]), p) for p in (run_dir / "snapshots").glob("main@*"))
    start = (run_dir / "config.toml").stat().st_mtime
    picks = [found[int(i)] for i in np.linspace(0, len(found) - 1, min(points, len(found)))]
    env_params = {"fake": fake or None}
    policy = build_policy(str(ENV_SCRIPT), str(AGENT_SCRIPT), env_params, seed=0)
    print(f"{'minutes':>8} {'snapshot':>10} {'won':>8} {'win rate':>9} {'mean HP diff':>13}")
    for version, path in picks:
        policy.set_weights(files.load(ModelKey("main", version)))
        policy.invalidate_cache()
        wins, diff = play(policy, rounds, fake)
        minutes = (path.stat().st_mtime - start) / 60
        print(f"{minutes:8.1f} {'main:' + str(version):>10} {wins:>4}/{rounds:<3} "
              f"{wins / rounds:9.2f} {diff:13.1f}", flush=True)


def main() -> None:
    """Train, then print the curve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--points", type=int, default=6)
    parser.add_argument("--fake", action="store_true", help="the fake server, not the game")
    parser.add_argument("--run-dir", type=Path, help="only evaluate this finished run")
    args = parser.parse_args()
    started = time.monotonic()
    if args.run_dir is None:
        root = Path(os.environ.get("TMPDIR", "/tmp")) / f"fightingice-bench-{os.getpid()}"
        root.mkdir(parents=True)
        args.run_dir = train(args.minutes, root, args.fake)
    print(f"run directory: {args.run_dir} (trained in {time.monotonic() - started:.0f} s)")
    curve(args.run_dir, args.rounds, args.fake, args.points)


if __name__ == "__main__":
    main()
