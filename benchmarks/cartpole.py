"""CartPole benchmark: msagent training vs raw env stepping and an in-process PPO reference.

Run: ``python benchmarks/cartpole.py [--seed 0] [--modes local ray central]``. In one run it
measures:

* raw CartPole stepping (32 vectorized envs, random actions): the ceiling for env steps/s;
* the in-process reference (``benchmarks/ppo_reference.py``: vectorized envs + batched MLP +
  the same PPO, no services): env steps/s and time to a mean return of 475;
* ``msagent train examples/cartpole_ppo.toml`` in each mode, as a fresh process: time to 475
  from process start, training env steps/s, and both as ratios to the figures above;
  ``central`` is the Ray mode with ``services.inference.mode = "central"``, also shown as a
  ratio to the ``ray`` row (local inference) with its mean predict batch;
* for each Ray mode, a start-up probe (a fresh process starting the same services as
  ``msagent train``): seconds from process start to the first env step, and the memory (PSS)
  of each service process;
* with both Ray modes, a steady-state comparison (``--steady-s``, default 20 s): both modes
  trained for a fixed time with no return target, alternated twice, so that the central/local
  ratio is not dominated by the few seconds of warm-up of a run that stops at 475.
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


CENTRAL = ("--set", 'services.inference.mode="central"')
"""The ``central`` row: Ray mode with inference servers instead of a policy copy per worker."""


def mode_args(mode: str) -> list[str]:
    """``msagent train`` arguments of a benchmark row (``central``: Ray + central inference)."""
    return ["--mode", "ray", *CENTRAL] if mode == "central" else ["--mode", mode]


def msagent_train(mode: str, seed: int, extra: tuple[str, ...] = ()) -> dict:
    """Run ``msagent train`` as a fresh process and return its result."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "msagent", "train", str(ROOT / "examples/cartpole_ppo.toml"),
               *mode_args(mode), "--set", f"run.seed={seed}", "--set", f"run.root={tmp!r}",
               "--set", "logging.progress=false", "--set", "logging.tensorboard=false",
               "--result-json", str(out), *extra]
        env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"msagent train --mode {mode} failed:\n{proc.stderr[-3000:]}")
        result = json.loads(out.read_text())
    result["process_wall_s"] = round(wall, 2)
    return result


def startup_probe(mode: str) -> dict:
    """Run the start-up probe (``startup_probe.py``) as a fresh process; its JSON result."""
    cmd = [sys.executable, str(ROOT / "benchmarks/startup_probe.py"), *mode_args(mode)[2:]]
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"start-up probe ({mode}) failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def train_row(mode: str, res: dict, raw: float, ref_sps: float) -> float:
    """Print one ``msagent train`` row; return its env steps/s."""
    sps = res["env_steps"] / res["elapsed_s"]
    print(f"msagent train {mode:7s}: mean return {res['mean_return']:.1f}, "
          f"time to 475 from process start {res['seconds_since_process_start']:5.1f} s "
          f"(training {res['elapsed_s']:.1f} s, {res['env_steps']:,} steps), "
          f"{sps:7,.0f} env steps/s = {sps / raw:.2f}x raw stepping, "
          f"{sps / ref_sps:.2f}x reference  [targets: < 25 s, > 7,500 steps/s]")
    return sps


def central_row(res: dict, sps: float, local_sps: float | None, probe: dict | None) -> None:
    """Print central inference against local inference (the ``ray`` row of this run)."""
    batch = res.get("inference_mean_batch") or (probe or {}).get("inference_mean_batch")
    ratio = f"{sps / local_sps:.2f}x" if local_sps else "n/a (add the ray row)"
    source = "run" if res.get("inference_mean_batch") else "start-up probe"
    batch_text = f"{batch:.2f} ({source})" if batch else "n/a"
    print(f"  central / local inference: {ratio} [target >= 0.6x]; mean predict batch "
          f"{batch_text}")


def steady_ratio(seed: int, seconds: float, rounds: int = 2) -> None:
    """Central against local inference at steady state: both modes trained for a fixed time
    (no return target, so no run ends during its warm-up), alternated ``rounds`` times."""
    fixed = ("--set", "run.stop.mean_return=1e9", "--set", f"run.stop.time_s={seconds}")
    rates: dict[str, list[float]] = {"ray": [], "central": []}
    for _ in range(rounds):
        for mode in rates:
            res = msagent_train(mode, seed, fixed)
            rates[mode].append(res["env_steps"] / res["elapsed_s"])
    ratios = [c / r for c, r in zip(rates["central"], rates["ray"])]
    print(f"steady state ({seconds:.0f} s each, alternated x{rounds}): local inference "
          + ", ".join(f"{r:,.0f}" for r in rates["ray"]) + " env steps/s; central "
          + ", ".join(f"{c:,.0f}" for c in rates["central"]) + " env steps/s; central / local "
          + ", ".join(f"{x:.2f}x" for x in ratios) + " [target >= 0.6x]")


def probe_row(mode: str, probe: dict, res: dict | None) -> None:
    """Print start-up time to the first env step and the PSS of each service process."""
    run_first = (res or {}).get("first_step_s")
    also = f"; in the training run {run_first:.1f} s" if run_first else ""
    print(f"  start-up ({mode}): first env step {probe['first_step_s']:.1f} s after process "
          f"start{also} [target < 10 s]; ray.init done at {probe['ray_up_s']:.1f} s, "
          f"services built at {probe['services_up_s']:.1f} s")
    per = ", ".join(f"{name} {mib:.0f}" for name, mib in probe["pss_mib"].items())
    print(f"  PSS MiB per service process: {per}; total {sum(probe['pss_mib'].values()):.0f} "
          f"(Ray's own processes {probe['ray_system_pss_mib']:.0f}, driver "
          f"{probe['driver_pss_mib']:.0f})")


def main() -> None:
    """Measure everything in one run and print the figures and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", nargs="+", default=["local", "ray", "central"],
                        choices=["local", "ray", "central"])
    parser.add_argument("--steady-s", type=float, default=20.0,
                        help="seconds of each fixed-length run of the steady-state central/local "
                             "comparison (0: skip it)")
    args = parser.parse_args()
    raw = raw_stepping()
    ref = ppo_reference.run(ppo_reference.CARTPOLE_REFERENCE, args.seed)
    print(f"raw CartPole stepping (32 envs, random actions): {raw:10,.0f} env steps/s")
    print(f"in-process reference (no services):              {ref.steps_per_second:10,.0f} "
          f"env steps/s, 475 after {ref.seconds:.1f} s training (+{ref.setup_seconds:.1f} s "
          f"setup), solved={ref.solved}")
    rates: dict[str, float] = {}
    for mode in args.modes:
        res = msagent_train(mode, args.seed)
        rates[mode] = train_row(mode, res, raw, ref.steps_per_second)
        probe = startup_probe(mode) if mode != "local" else None
        if mode == "central":
            central_row(res, rates[mode], rates.get("ray"), probe)
        if probe is not None:
            probe_row(mode, probe, res)
    if args.steady_s > 0 and {"ray", "central"} <= set(args.modes):
        steady_ratio(args.seed, args.steady_s)


if __name__ == "__main__":
    main()
