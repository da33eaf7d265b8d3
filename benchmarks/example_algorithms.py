"""The example user algorithms in leagues, each beside the built-in PPO in the same run.

Run: ``python benchmarks/example_algorithms.py [--seed 0] [--kuhn-s 90] [--tictactoe-s 120]``.
In one invocation, in local mode:

1. ``examples/kuhn_league.toml`` for ``--kuhn-s`` seconds with PPO, then with the example
   KL-regularized policy gradient (``examples/algorithms/kl_pg.py``) for every player: the main
   agent's NashConv at the end (OpenSpiel's exact value, from the evaluator) and the ratio.
2. ``examples/tictactoe_league.toml`` for ``--tictactoe-s`` seconds as shipped (a PPO main
   agent), then with a double-DQN main agent (``examples/algorithms/dqn.py``, its own
   Q-network, replay table and learner lag) beside the file's PPO exploiters: the main
   agent's share of losing moves by seat (the perfect player judges every position) and its
   win rate against the random bot, and the ratio of losing-move shares.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
KL_PG = ["algorithm.script=" + json.dumps(str(EXAMPLES / "algorithms" / "kl_pg.py")),
         "algorithm.settings={lr=0.003, epochs=4, kl_coef=0.05, reference_rate=0.1}"]
DQN_MAIN = [
    'league.players=[{id="main", role="main", env_share=10, '
    'agent="algorithms/dqn_agent.py", algorithm={script="algorithms/dqn.py", '
    'settings={lr=0.00025, steps_per_update=8, minibatch=128, target_every=50}}, '
    'learner={max_policy_lag=1000000, batch_fragments=8}, buffer={max_size=1600, '
    'sampler="uniform", max_times_sampled=8, min_size_to_sample=32}}, '
    '{id="main_exploiter", role="main_exploiter"}, '
    '{id="league_exploiter", role="league_exploiter"}]']


def train(example: str, seed: int, seconds: float, overrides: list[str]) -> dict:
    """One local ``msagent train`` of an example for ``seconds``; its result."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        sets = [f"run.seed={seed}", f"run.root={json.dumps(tmp)}", "logging.progress=false",
                "logging.tensorboard=false", f"run.stop.time_s={seconds}", *overrides]
        cmd = [sys.executable, "-m", "msagent", "train", str(EXAMPLES / example),
               "--mode", "local", "--result-json", str(out)]
        for item in sets:
            cmd += ["--set", item]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{example} failed (rc {proc.returncode}):\n{proc.stderr[-2000:]}")
        return json.loads(out.read_text())


def nash_conv(result: dict) -> float:
    """The main agent's last measured NashConv (the league's mixture is measured beside)."""
    return [m for m in result["league"]["nash_conv"] if m["player"] == "main"][-1]["nash_conv"]


def losing(result: dict) -> dict[str, float]:
    """The main agent's share of losing moves per seat at the judge's last exam."""
    seats = result["league"]["judged"][-1]["seats"]
    return {s: e["losing"] / max(e["positions"], 1) for s, e in sorted(seats.items())}


def random_wins(result: dict) -> float:
    """The main agent's win rate against the random bot over both seats."""
    rows = [r for r in result["league"]["eval"] if r["opponent"] == "bot:random"]
    return sum(r["wins"] for r in rows) / max(sum(r["games"] for r in rows), 1)


def main() -> None:
    """Both comparisons, one line each, and their ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kuhn-s", type=float, default=90.0)
    parser.add_argument("--tictactoe-s", type=float, default=120.0)
    args = parser.parse_args()
    kuhn = {name: nash_conv(train("kuhn_league.toml", args.seed, args.kuhn_s, sets))
            for name, sets in (("PPO", []), ("KL-PG", KL_PG))}
    for name, value in kuhn.items():
        print(f"Kuhn league, {name:6s} main NashConv after {args.kuhn_s:.0f} s: {value:.4f}",
              flush=True)
    print(f"KL-PG / PPO NashConv: {kuhn['KL-PG'] / kuhn['PPO']:.2f}", flush=True)
    judged = {}
    for name, sets in (("PPO", []), ("DQN", DQN_MAIN)):
        result = train("tictactoe_league.toml", args.seed, args.tictactoe_s,
                       ['services.evaluator.opponents=["bot:random"]',
                        "services.evaluator.final_games=0", *sets])
        judged[name] = losing(result)
        shares = " / ".join(f"{v:.1%}" for v in judged[name].values())
        print(f"tic-tac-toe league, {name} main after {args.tictactoe_s:.0f} s: losing moves "
              f"{shares} (seat 0 / 1), {random_wins(result):.1%} won vs bot:random", flush=True)
    mean = {k: sum(v.values()) / len(v) for k, v in judged.items()}
    print(f"DQN / PPO losing-move share: {mean['DQN'] / max(mean['PPO'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
