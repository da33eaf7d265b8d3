"""Data-parallel PPO: two learners on two halves of a batch, their gradients averaged by a
ring all-reduce over a real gloo process group, end with the same parameters as one learner
on the whole batch; and they refuse a non-finite loss together."""

from __future__ import annotations


import gymnasium as gym
import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from msagent.policy import NetworkConfig, Policy, PPO, PPOConfig
from msagent.services.learner.group import free_port
from msagent.policy.algorithms.collective import (SINGLE, TorchCollective, _buckets,
                                                 global_normalize)
from tests.policy.helpers import acted_fragment

OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
CONFIG = PPOConfig(epochs=3, minibatches=1, seed=3, max_grad_norm=0.5)


def fragments() -> list:
    """Eight fragments of 16 steps acted by a fresh policy on random observations."""
    policy = Policy(OBS, gym.spaces.Discrete(2), NetworkConfig(hidden=(32, 32)), seed=0)
    rng = np.random.default_rng(1)
    return [acted_fragment(policy, rng.uniform(-1, 1, (16, 4)).astype(np.float32), seed=i)
            for i in range(8)]


def fresh_ppo() -> PPO:
    """The same initial network in every process."""
    return PPO(Policy(OBS, gym.spaces.Discrete(2), NetworkConfig(hidden=(32, 32)), seed=7),
               CONFIG)


def _rank(rank: int, world: int, port: int, out: dict, poison: bool) -> None:
    """One learner: join the group, update on its share, report its parameters."""
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        ppo = fresh_ppo()
        ppo.collective = TorchCollective()
        share = fragments()[rank::world]
        if poison and rank == 1:
            share[0].rewards[3] = np.inf  # only this rank sees it
        try:
            ppo.update(share)
            out[rank] = {k: v.copy() for k, v in ppo.policy.get_weights().items()}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            out[rank] = type(exc).__name__
    finally:
        dist.destroy_process_group()


def run_group(world: int, poison: bool = False) -> dict:
    """Run ``world`` learners as processes; each one's parameters (or error name)."""
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_rank, args=(world, free_port("127.0.0.1"), out, poison), nprocs=world,
                 join=True)
        return dict(out)


@pytest.mark.slow
def test_two_learners_on_halves_equal_one_learner_on_the_whole_batch():
    single = fresh_ppo()
    single.update(fragments()[0::2] + fragments()[1::2])  # the same rows, any order
    want = single.policy.get_weights()
    got = run_group(2)
    for rank in (0, 1):
        for name, value in want.items():
            np.testing.assert_allclose(got[rank][name], value, atol=1e-6, err_msg=name)
    assert any(not np.allclose(v, fresh_ppo().policy.get_weights()[k]) for k, v in want.items())


@pytest.mark.slow
def test_a_non_finite_batch_on_one_rank_is_refused_by_every_rank():
    got = run_group(2, poison=True)
    assert got == {0: "NonFiniteError", 1: "NonFiniteError"}


def test_buckets_respect_the_size_limit_and_keep_order():
    tensors = [torch.zeros(10), torch.zeros(10), torch.zeros(30), torch.zeros(5, dtype=torch.int64)]
    buckets = _buckets(tensors, limit=80)
    assert [[t.numel() for t in b] for b in buckets] == [[10, 10], [30], [5]]


def test_single_collective_normalizes_like_the_plain_operator():
    x = torch.randn(50)
    np.testing.assert_allclose(global_normalize(x, SINGLE), (x - x.mean()) / (x.std() + 1e-8),
                               atol=1e-7)


def _cuda_rank(rank: int, world: int, port: int, out: dict) -> None:
    """One NCCL rank on its own GPU: average one CUDA tensor."""
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    try:
        tensor = torch.full((1000,), float(rank), device="cuda")
        TorchCollective().average([tensor])
        out[rank] = float(tensor.mean().item())
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="NCCL groups need two GPUs")
def test_nccl_group_averages_cuda_tensors():
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_cuda_rank, args=(2, free_port("127.0.0.1"), out), nprocs=2, join=True)
        assert dict(out) == {0: 0.5, 1: 0.5}
