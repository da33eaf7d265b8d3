"""Learner groups: PPO samples/s with N=1 and N=2 data-parallel learners, and the gradient
all-reduce time per update against a bare ``torch.distributed.all_reduce`` of the same size.

Run: ``python benchmarks/learners.py [--updates 20]``. For each network (the CartPole MLP and
a small CNN), N learner processes join one gloo group on 127.0.0.1; each runs PPO updates on
its share of a fixed batch (the batch is split, not repeated), so samples/s is the whole
batch's rows per second of update. The all-reduce time is what msagent's bucketed averaging
(flatten, all-reduce, divide, copy back) takes per update, beside a bare all-reduce of one
flat tensor of the same number of elements at the same point of the update (updates
alternate between the two), each timed per call after a barrier, medians times the calls
per update (target: at most 1.3x). The peer wait (the
barrier before each averaging: the slower rank's backward) is shown apart. On 2 CPU cores N=2 shows the overhead, not a speed-up.
"""

from __future__ import annotations

import argparse
import os
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
from msagent.services.learner.group import free_port  # noqa: E402
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


class BareCollective(TorchCollective):
    """Times a bare ``all_reduce`` of one preallocated flat tensor of the gradients' size, at
    the same point of the update (after the same barrier); averages nothing."""

    def average(self, tensors) -> None:
        """Barrier, then one timed bare all-reduce."""
        n = sum(t.numel() for t in tensors)
        if getattr(self, "_bare", None) is None or self._bare.numel() != n:
            self._bare = torch.zeros(n)
        waited = time.perf_counter()
        self.dist.barrier()
        self.wait_s += time.perf_counter() - waited
        start = time.perf_counter()
        self.dist.all_reduce(self._bare)
        self.calls_s.append(time.perf_counter() - start)


def _learner(rank: int, world: int, port: int, name: str, updates: int, out: dict) -> None:
    """One learner process: updates alternating msagent's averaging and a bare all-reduce at
    the same point; samples/s from msagent's updates."""
    torch.set_num_threads(1)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) >= world:  # one core each: placement noise would swamp sub-ms timings
        os.sched_setaffinity(0, {cores[rank]})
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    space, network = NETWORKS[name]
    ppo = PPO(Policy(space, gym.spaces.Discrete(2), network, seed=0),
              PPOConfig(epochs=2, minibatches=2, seed=0))
    collective = TorchCollective(measure_wait=True)
    bare = BareCollective(measure_wait=True)
    share = batch(space)[rank::world]
    ppo.collective = collective
    ppo.update(share)  # warm up (Adam built, kernels loaded)
    collective.reduce_s = collective.wait_s = 0.0
    collective.calls_s.clear()
    elapsed = 0.0
    for _ in range(updates):
        ppo.collective = collective
        start = time.perf_counter()
        ppo.update(share)
        elapsed += time.perf_counter() - start
        ppo.collective = bare if world > 1 else collective
        ppo.update(share)
    per_update = 2 * 2  # epochs x minibatches: one averaging each
    ours = float(np.median(collective.calls_s)) * per_update if collective.calls_s else 0.0
    plain = float(np.median(bare.calls_s)) * per_update if bare.calls_s else 0.0
    if rank == 0:
        out[(name, world)] = (FRAGMENTS * STEPS * updates / elapsed, ours, plain,
                              sum(p.numel() for p in ppo.policy.model.parameters()),
                              collective.wait_s / updates)
    dist.barrier()
    dist.destroy_process_group()


def main() -> None:
    """Both networks, N = 1 and 2; one table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3,
                        help="whole runs; the ratio's median over them is the figure")
    args = parser.parse_args()
    print(f"{'network':14s} {'params':>9s} {'N':>2s} {'samples/s':>10s} "
          f"{'all-reduce ms/update':>21s} {'bare ms/update':>15s} {'ratio':>6s} "
          f"{'peer wait ms/update':>20s}")
    ratios: dict[str, list[float]] = {name: [] for name in NETWORKS}
    for _ in range(args.repeat):
        for (name, world), row in sorted(run_once(args.updates).items()):
            rate, reduce_s, bare_s, params, wait_s = row
            ratio = reduce_s / bare_s if world > 1 and bare_s > 0 else None
            if ratio is not None:
                ratios[name].append(ratio)
            print(f"{name:14s} {params:9,d} {world:2d} {rate:10,.0f} {1e3 * reduce_s:21.2f} "
                  f"{1e3 * bare_s:15.2f} {'-' if ratio is None else f'{ratio:.2f}':>6s} "
                  f"{1e3 * wait_s:20.2f}", flush=True)
    for name, found in ratios.items():
        print(f"{name}: all-reduce / bare, median of {len(found)} runs: "
              f"{float(np.median(found)):.2f} (target <= 1.3)")


def run_once(updates: int) -> dict:
    """Both networks at N = 1 and 2: (network, N) -> figures."""
    with mp.Manager() as manager:
        out = manager.dict()
        for name in NETWORKS:
            for world in (1, 2):
                mp.spawn(_learner, args=(world, free_port("127.0.0.1"), name, updates, out),
                         nprocs=world, join=True)
        return dict(out)


if __name__ == "__main__":
    main()
