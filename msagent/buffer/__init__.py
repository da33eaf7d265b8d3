"""Replay buffer with Reverb-like tables: samplers, removers and rate limiters you compose.

Pure Python and thread-safe; knows nothing of Ray or services. Typical use::

    buffer = ReplayBuffer([
        on_policy_queue("fragments", max_size=64),
        TableConfig("replay", max_size=100_000, sampler="prioritized",
                    sampler_params={"alpha": 0.6, "beta": 0.4},
                    rate_limiter=RateLimiterConfig(1000, samples_per_insert=4.0,
                                                   error_buffer=400.0)),
    ])
    keys = buffer.insert("fragments", [fragment, ...])
    batch = buffer.sample("fragments", 8, timeout_s=30.0)   # list of SampledItem
"""

from msagent.buffer.config import TableConfig, on_policy_queue
from msagent.buffer.rate_limiter import RateLimiter, RateLimiterConfig
from msagent.buffer.records import SampledItem, TableStats
from msagent.buffer.removers import REMOVER_KINDS, FifoRemover, LifoRemover, Remover, make_remover
from msagent.buffer.replay_buffer import ReplayBuffer
from msagent.buffer.samplers import (
    SAMPLER_KINDS,
    Draw,
    FifoSampler,
    LifoSampler,
    PrioritizedSampler,
    Sampler,
    UniformSampler,
    make_sampler,
)
from msagent.buffer.sumtree import SumTree
from msagent.buffer.table import Table

__all__ = [
    "REMOVER_KINDS",
    "SAMPLER_KINDS",
    "Draw",
    "FifoRemover",
    "FifoSampler",
    "LifoRemover",
    "LifoSampler",
    "PrioritizedSampler",
    "RateLimiter",
    "RateLimiterConfig",
    "Remover",
    "ReplayBuffer",
    "SampledItem",
    "Sampler",
    "SumTree",
    "Table",
    "TableConfig",
    "TableStats",
    "UniformSampler",
    "make_remover",
    "make_sampler",
    "on_policy_queue",
]
