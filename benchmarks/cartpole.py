"""CartPole benchmark: msagent training vs raw env stepping and an in-process PPO reference.

Run: ``python benchmarks/cartpole.py [--seed 0] [--modes local ray]``. In one run it measures:

* raw CartPole stepping (32 vectorized envs, random actions): the ceiling for env steps/s;
* the in-process reference (``benchmarks/ppo_reference.py``: vectorized envs + batched MLP +
  the same PPO, no services): env steps/s and time to a mean return of 475;
* ``msagent train examples/cartpole_ppo.toml`` in each mode, as a fresh process: time to 475
  from process start, training env steps/s, and both as ratios to the figures above.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import ppo_reference  # noqa: E402


def raw_stepping(num_envs: int = 32, steps: int = 2000) -> float:
    """Env steps/s of CartPole alone: 32 vectorized envs stepped with random actions."""
    envs = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * num_envs,
                                    autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    envs.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 2, size=(steps, num_envs))
    start = time.perf_counter()
    for a in actions:
        envs.step(a)
    rate = steps * num_envs / (time.perf_counter() - start)
    envs.close()
    return rate


def msagent_train(mode: str, seed: int) -> dict:
    """Run ``msagent train`` as a fresh process and return its result."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "msagent", "train", str(ROOT / "examples/cartpole_ppo.toml"),
               "--mode", mode, "--set", f"run.seed={seed}", "--set", f"run.root={tmp!r}",
               "--set", "logging.progress=false", "--set", "logging.tensorboard=false",
               "--result-json", str(out)]
        env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"msagent train --mode {mode} failed:\n{proc.stderr[-3000:]}")
        result = json.loads(out.read_text())
    result["process_wall_s"] = round(wall, 2)
    return result


def main() -> None:
    """Measure everything in one run and print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", nargs="+", default=["local", "ray"])
    args = parser.parse_args()
    raw = raw_stepping()
    ref = ppo_reference.run(ppo_reference.CARTPOLE_REFERENCE, args.seed)
    print(f"raw CartPole stepping (32 envs, random actions): {raw:10,.0f} env steps/s")
    print(f"in-process reference (no services):              {ref.steps_per_second:10,.0f} "
          f"env steps/s, 475 after {ref.seconds:.1f} s training (+{ref.setup_seconds:.1f} s "
          f"setup), solved={ref.solved}")
    for mode in args.modes:
        res = msagent_train(mode, args.seed)
        sps = res["env_steps"] / res["elapsed_s"]
        print(f"msagent train --mode {mode:5s}: mean return {res['mean_return']:.1f}, "
              f"time to 475 from process start {res['seconds_since_process_start']:5.1f} s "
              f"(training {res['elapsed_s']:.1f} s, {res['env_steps']:,} steps), "
              f"{sps:7,.0f} env steps/s = {sps / raw:.2f}x raw stepping, "
              f"{sps / ref.steps_per_second:.2f}x reference  "
              f"[targets: < 25 s, > 7,500 steps/s]")


if __name__ == "__main__":
    main()
