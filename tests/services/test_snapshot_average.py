"""The evaluator's averaged player: the mean of the newest league snapshots in a real model
pool, recomputed when a newer snapshot arrives, each snapshot pulled once."""

from __future__ import annotations

import threading

import numpy as np

from msagent.model_pool.pool import ModelPool
from msagent.policy import ActionSpec, Policy
from msagent.services.evaluator.snapshot_average import SnapshotAverage


def scaled(weights: dict, factor: float) -> dict:
    """``weights`` times ``factor``, in their dtypes."""
    return {k: (w * factor).astype(w.dtype) for k, w in weights.items()}


def setup(count: int):
    """A pool holding main:1..4 (the base weights times 1..4) and a follower of its newest."""
    pool, base = ModelPool(keep_last=None), Policy((4,), ActionSpec.discrete(2), seed=0)
    weights = base.get_weights()
    for factor in (1, 2, 3, 4):
        pool.push("main", scaled(weights, factor))
    pulled: list = []

    def pull(key):
        pulled.append(key.version)
        return pool.pull(key).weights

    follower = SnapshotAverage(Policy((4,), ActionSpec.discrete(2), seed=1), "main", count,
                               keys=pool.list, pull=pull)
    return pool, weights, follower, pulled


def test_it_holds_the_mean_of_the_newest_snapshots_and_pulls_each_once() -> None:
    pool, weights, follower, pulled = setup(count=3)
    assert follower.refresh() == 4
    for name, w in follower.policy.get_weights().items():
        np.testing.assert_allclose(w, weights[name] * 3.0, rtol=1e-6)  # mean of 2, 3, 4
    assert sorted(pulled) == [2, 3, 4]
    assert follower.refresh() == 4 and len(pulled) == 3  # nothing newer: nothing pulled
    pool.push("main", scaled(weights, 8))
    assert follower.refresh() == 5
    for name, w in follower.policy.get_weights().items():
        np.testing.assert_allclose(w, weights[name] * 5.0, rtol=1e-6)  # mean of 3, 4, 8
    assert sorted(pulled) == [2, 3, 4, 5]


def test_wait_for_returns_once_the_version_is_in_the_mean_or_when_stopped() -> None:
    _, _, follower, _ = setup(count=2)
    assert follower.wait_for(3, threading.Event()) == 4
    stop = threading.Event()
    stop.set()
    assert follower.wait_for(99, stop, poll_s=0.01) == 4
