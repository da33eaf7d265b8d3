"""Async IMPALA against sync PPO on CartPole: env steps/s and time to the return target.

Run: ``python benchmarks/impala.py [--seed 0]``. In one invocation it trains
``examples/cartpole_ppo.toml`` (sync: actors wait for every new version) and then
``examples/cartpole_impala.toml`` (async actors, V-trace) on the embedded Ray until a mean
return of 475, and prints each one's env steps, wall time and env steps/s, and the ratio of
env steps/s (target: IMPALA at least 1.3x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def train(example: str, seed: int) -> dict:
    """One ``msagent train`` of an example; its result."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "msagent", "train", str(ROOT / "examples" / example),
               "--set", f"run.seed={seed}", "--set", f"run.root={json.dumps(tmp)}",
               "--set", "logging.progress=false", "--set", "logging.tensorboard=false",
               "--result-json", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{example} failed (rc {proc.returncode}):\n{proc.stderr[-2000:]}")
        return json.loads(out.read_text())


def main() -> None:
    """Both examples, one table, the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rates = {}
    for name, example in (("sync PPO", "cartpole_ppo.toml"), ("IMPALA", "cartpole_impala.toml")):
        r = train(example, args.seed)
        rates[name] = r["env_steps"] / r["elapsed_s"]
        print(f"{name:9s} {r['stop_reason']:28s} env steps {r['env_steps']:9,d}  "
              f"{r['elapsed_s']:6.1f} s  {rates[name]:9,.0f} env steps/s", flush=True)
    print(f"IMPALA / sync PPO env steps/s: {rates['IMPALA'] / rates['sync PPO']:.2f} "
          "(target >= 1.3)")


if __name__ == "__main__":
    main()
