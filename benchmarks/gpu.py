"""The learner and the inference servers on a GPU (``services.learner.device`` and
``services.inference.device``) against the CPU.

Run: ``python benchmarks/gpu.py [--updates 5]``. In one invocation it times, on the CPU (the
baseline, with every core torch is given) and, when torch sees a GPU, on it:

1. PPO updates of the same batches: an Atari-sized policy (84x84x4 uint8 frames, the
   examples' CNN, 18 actions; 8 fragments of 128 steps, 4 epochs of 4 minibatches) and
   CartPole's MLP (64x64; 8 fragments of 128 steps, as ``examples/cartpole_ppo.toml``);
2. an inference server's forward pass (``Policy.act``: numpy in, numpy out, sampling on the
   CPU) on batches of 16, 64 and 256 Atari frames, what central inference answers per call.

It prints seconds per update, env steps learned from per second, milliseconds per predict
call and the GPU's speed-ups; without a GPU, the CPU figures.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np
import torch

from msagent.policy import NetworkConfig, Policy, PPOConfig
from msagent.policy.algorithms.impala import ALGORITHMS
from msagent.vocabulary import Fragment, ModelKey

CASES = {
    "atari_cnn": (gym.spaces.Box(0, 255, (84, 84, 4), np.uint8), gym.spaces.Discrete(18),
                  NetworkConfig(cnn_features=512)),
    "cartpole_mlp": (gym.spaces.Box(-5, 5, (4,), np.float32), gym.spaces.Discrete(2),
                     NetworkConfig()),
}
CONFIG = PPOConfig(epochs=4, minibatches=4, seed=0)


def batch(obs_space: gym.Space, act_space: gym.Space, network: NetworkConfig,
          fragments: int, steps: int) -> list[Fragment]:
    """Fragments acted by a fresh CPU policy on random observations."""
    policy, rng, out = Policy(obs_space, act_space, network, seed=0), np.random.default_rng(0), []
    for i in range(fragments):
        if obs_space.dtype == np.uint8:
            obs = rng.integers(0, 256, (steps, *obs_space.shape), dtype=np.uint8)
        else:
            obs = rng.uniform(-1, 1, (steps, *obs_space.shape)).astype(np.float32)
        acted = policy.act(obs)
        out.append(Fragment(obs, acted.actions, acted.logp, acted.values,
                            rng.standard_normal(steps).astype(np.float32),
                            np.zeros(steps, bool), np.zeros(steps, bool),
                            np.zeros(steps, np.float32), 0.0, ModelKey("main", i)))
    return out


def seconds_per_update(case: str, device: str, updates: int, data: list[Fragment]) -> float:
    """Median wall seconds of one PPO update on ``device`` (after one warm-up update)."""
    obs_space, act_space, network = CASES[case]
    ppo = ALGORITHMS["ppo"](Policy(obs_space, act_space, network, seed=1).to(device), CONFIG)
    ppo.update(data)
    times = []
    for _ in range(updates):
        if device != "cpu":
            torch.cuda.synchronize()
        start = time.perf_counter()
        ppo.update(data)
        ppo.policy.get_weights()  # what the learner publishes after each update
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def ms_per_act(device: str, rows: int, calls: int) -> float:
    """Median milliseconds of one ``Policy.act`` on ``rows`` Atari frames on ``device``."""
    obs_space, act_space, network = CASES["atari_cnn"]
    policy = Policy(obs_space, act_space, network, seed=1).to(device)
    obs = np.random.default_rng(0).integers(0, 256, (rows, *obs_space.shape), dtype=np.uint8)
    policy.act(obs)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        policy.act(obs)  # its answers are numpy on the CPU: the copy back is counted
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1000


def inference_rows(gpu: bool, calls: int) -> dict[str, dict[str, float]]:
    """Milliseconds per predict call and frames answered per second, per batch size."""
    rows = {}
    for n in (16, 64, 256):
        row = {"cpu_ms": round(ms_per_act("cpu", n, calls), 2)}
        if gpu:
            row["cuda_ms"] = round(ms_per_act("cuda", n, calls), 2)
            row["speedup"] = round(row["cpu_ms"] / row["cuda_ms"], 2)
        row.update({f"{d}_frames_per_s": round(n / row[f"{d}_ms"] * 1000)
                    for d in ("cpu", "cuda") if f"{d}_ms" in row})
        rows[f"act_{n}"] = row
        print(f"inference, {n} Atari frames per call: " + ", ".join(
            f"{k} {v}" for k, v in row.items()), flush=True)
    return rows


def main() -> None:
    """Updates, then predict calls, each on the CPU and on the GPU when there is one; one
    line each and JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--fragments", type=int, default=8)
    parser.add_argument("--steps", type=int, default=128)
    parser.add_argument("--calls", type=int, default=20, help="predict calls timed per size")
    args = parser.parse_args()
    gpu = torch.cuda.is_available()
    rows = {"torch": torch.__version__, "cpu_threads": torch.get_num_threads(),
            "gpu": torch.cuda.get_device_name(0) if gpu else None}
    for case, (obs_space, act_space, network) in CASES.items():
        data = batch(obs_space, act_space, network, args.fragments, args.steps)
        steps = args.fragments * args.steps
        row = {"cpu_s": round(seconds_per_update(case, "cpu", args.updates, data), 4)}
        if gpu:
            row["cuda_s"] = round(seconds_per_update(case, "cuda", args.updates, data), 4)
            row["speedup"] = round(row["cpu_s"] / row["cuda_s"], 2)
        row.update({f"{d}_steps_per_s": round(steps / row[f"{d}_s"])
                    for d in ("cpu", "cuda") if f"{d}_s" in row})
        rows[case] = row
        print(f"{case}: {steps} steps per update; " + ", ".join(
            f"{k} {v}" for k, v in row.items()), flush=True)
    rows["inference"] = inference_rows(gpu, args.calls)
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
