"""The LRU cache of frozen snapshots: a miss builds a policy of the snapshot's own player's
network (league players may have different ones) or reuses an evicted one of that player."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from msagent.policy import NetworkConfig, Policy
from msagent.policy.cache import PolicyCache
from msagent.vocabulary import ModelKey

OBS, ACT = spaces.Box(-1, 1, (4,), np.float32), spaces.Discrete(2)
WIDTHS = {"big": 32, "small": 8}


def build(policy_id: str) -> Policy:
    """A policy of ``policy_id``'s width."""
    built.append(policy_id)
    return Policy(OBS, ACT, NetworkConfig(hidden=(WIDTHS[policy_id],)), seed=0)


built: list[str] = []


def test_each_snapshot_gets_its_player_s_network_and_evicted_ones_are_reused_per_player() -> None:
    built.clear()
    weights = {p: build(p).get_weights() for p in WIDTHS}
    built.clear()
    cache = PolicyCache(build, lambda key: weights[key.policy_id], size=1)
    for key in [ModelKey("big", 1), ModelKey("small", 1), ModelKey("big", 2),
                ModelKey("small", 2)]:
        policy = cache.get(key)
        assert policy.get_weights()["actor.0.weight"].shape == (WIDTHS[key.policy_id], 4)
    # one slot: each get evicts the other player's policy; from the third get on, an evicted
    # policy of the same player is reused instead of building another
    assert built == ["big", "small"] and cache.misses == 4 and len(cache) == 1
