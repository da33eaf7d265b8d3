"""Learner groups: PPO samples/s with N=1 and N=2 data-parallel learners, and the gradient
all-reduce time per update against a bare ``torch.distributed.all_reduce`` of the same size.

Run: ``python benchmarks/learners.py [--updates 20]``. For each network (the CartPole MLP and
a small CNN), N learner processes join one gloo group on 127.0.0.1; each runs PPO updates on
its share of a fixed batch (the batch is split, not repeated), so samples/s is the whole
batch's rows per second of update. The all-reduce time is what msagent's bucketed averaging
(flatten, all-reduce, divide, copy back) takes per update, beside a bare all-reduce of one
flat tensor of the same number of elements, timed the same number of times in the same
processes (target: at most 1.3x). On 2 CPU cores N=2 shows the overhead, not a speed-up.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from msagent.policy import NetworkConfig, Policy, PPO, PPOConfig  # noqa: E402
from msagent.policy.algorithms.collective import TorchCollective  # noqa: E402
from msagent.vocabulary import Fragment, ModelKey  # noqa: E402

NETWORKS = {
    "cartpole-mlp": (gym.spaces.Box(-1, 1, (4,), np.float32), NetworkConfig(hidden=(64, 64))),
    "cnn": (gym.spaces.Box(0, 255, (42, 42, 4), np.uint8),
            NetworkConfig(hidden=(256,), cnn_features=256)),
}
FRAGMENTS, STEPS = 32, 32


def batch(space: gym.spaces.Box) -> list[Fragment]:
    """A fixed batch of random fragments for ``space``."""
    rng = np.random.default_rng(0)
    out = []
    for _ in range(FRAGMENTS):
        obs = rng.uniform(0, 1, (STEPS, *space.shape)).astype(space.dtype)
        out.append(Fragment(
            obs=obs, actions=rng.integers(0, 2, STEPS), logp=np.full(STEPS, -0.7, np.float32),
            values=np.zeros(STEPS, np.float32), rewards=rng.normal(size=STEPS).astype(np.float32),
            terminated=np.zeros(STEPS, bool), truncated=np.zeros(STEPS, bool),
            final_values=np.zeros(STEPS, np.float32), bootstrap_value=0.0,
            policy=ModelKey("main", 0)))
    return out


def _learner(rank: int, world: int, port: int, name: str, updates: int, out: dict) -> None:
    """One learner process: timed updates, then timed bare all-reduces of the same size."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    space, network = NETWORKS[name]
    ppo = PPO(Policy(space, gym.spaces.Discrete(2), network, seed=0),
              PPOConfig(epochs=2, minibatches=2, seed=0))
    collective = TorchCollective(measure_wait=True)
    ppo.collective = collective
    share = batch(space)[rank::world]
    ppo.update(share)  # warm up (Adam built, kernels loaded)
    collective.reduce_s = collective.wait_s = 0.0
    steps = 0
    start = time.perf_counter()
    for _ in range(updates):
        ppo.update(share)
        steps += 2 * 2
    elapsed = time.perf_counter() - start
    flat = torch.zeros(sum(p.numel() for p in ppo.policy.model.parameters()))
    dist.barrier()
    bare = time.perf_counter()
    for _ in range(steps):
        dist.all_reduce(flat)
    bare = time.perf_counter() - bare
    if rank == 0:
        out[(name, world)] = (FRAGMENTS * STEPS * updates / elapsed,
                              collective.reduce_s / updates, bare / updates, flat.numel(),
                              collective.wait_s / updates)
    dist.barrier()
    dist.destroy_process_group()


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    """Both networks, N = 1 and 2; one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=20)
    args = parser.parse_args()
    with mp.Manager() as manager:
        out = manager.dict()
        for name in NETWORKS:
            for world in (1, 2):
                mp.spawn(_learner, args=(world, free_port(), name, args.updates, out),
                         nprocs=world, join=True)
        results = dict(out)
    print(f"{'network':14s} {'params':>9s} {'N':>2s} {'samples/s':>10s} "
          f"{'all-reduce ms/update':>21s} {'bare ms/update':>15s} {'ratio':>6s} "
          f"{'peer wait ms/update':>20s}")
    for (name, world), (rate, reduce_s, bare_s, params, wait_s) in sorted(results.items()):
        ratio = f"{reduce_s / bare_s:.2f}" if world > 1 and bare_s > 0 else "-"
        print(f"{name:14s} {params:9,d} {world:2d} {rate:10,.0f} {1e3 * reduce_s:21.2f} "
              f"{1e3 * bare_s:15.2f} {ratio:>6s} {1e3 * wait_s:20.2f}")


if __name__ == "__main__":
    main()
