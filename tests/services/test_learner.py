"""The learner service: dropping stale fragments, model-pool snapshots and checkpoints."""

from __future__ import annotations

import pytest
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from msagent.policy import CARTPOLE_PPO
from msagent.rundir import RunDir, unflatten_state
from msagent.runtime import ServiceHandle, Solver, launch, publish, subscribe
from msagent.services.learner import Learner, LearnerSettings
from msagent.services.model_pool import ModelPoolService
from msagent.services.params import params_topic
from msagent.services.replay_buffer import ReplayBufferService
from msagent.vocabulary import ModelKey
from tests.services.helpers import SCRIPTS, TABLE, cartpole_fragments, cartpole_policy, \
    fifo_table, wait_until

BATCH = 4
"""Fragments per learner update."""


def learner_stats(learner: ServiceHandle) -> dict[str, Any]:
    """The learner's counters and published version."""
    return Solver().retrieve(learner, "stats")


def stats_once(learner: ServiceHandle, counter: str, what: str) -> dict[str, Any]:
    """The learner's stats as soon as ``counter`` is above 0."""
    return wait_until(lambda: (s := learner_stats(learner))[counter] > 0 and s, what=what)


def insert(buffer: ServiceHandle, version: int, seed: int) -> None:
    """Put one batch of real CartPole fragments labelled ``main:version`` into the buffer."""
    fragments = cartpole_fragments(ModelKey("main", version), num_envs=BATCH, seed=seed)
    Solver().retrieve(buffer, "insert_wait", TABLE, fragments)


def assert_same_weights(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    """Fail unless both weight dicts hold the same names and bit-identical arrays."""
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype and np.array_equal(actual[name], value), name


@pytest.mark.slow
def test_learner_drops_stale_fragments_snapshots_and_checkpoints(backend: str,
                                                                 tmp_path: Path) -> None:
    run_dir = RunDir.create(tmp_path, "learner")
    buffer = launch(ReplayBufferService, args=([fifo_table()],))
    pool = launch(ModelPoolService)
    learner = launch(Learner, args=(LearnerSettings(
        scripts=SCRIPTS, ppo=CARTPOLE_PPO, batch_fragments=BATCH, max_policy_lag=0,
        dump_model_every=1, run_dir=str(run_dir.path)),))
    topic = params_topic("main")
    old = publish(topic, cartpole_policy(7).get_weights())
    insert(buffer, old, seed=1)
    publish(topic, cartpole_policy(8).get_weights())  # newer parameters: `old` is now stale
    learner.call_all("run")
    try:
        stats = stats_once(learner, "dropped_fragments", "the stale fragments to be dropped")
        assert stats["dropped_fragments"] == BATCH
        assert stats["updates"] == 0 and stats["snapshots"] == 0 and stats["error"] is None
        # one publish when it started, none for the dropped batch (the actors of stale
        # fragments are not waiting: the version after theirs exists)
        assert stats["version"] == old + 2
        assert Solver().retrieve(pool, "list", "main") == []

        # fragments whose newest step was acted by the version in use are trained on, however
        # old their first step (a slow seat's fragment spans versions)
        current = stats["version"]
        fragments = cartpole_fragments(ModelKey("main", old), num_envs=BATCH, seed=2)
        fragments = [replace(f, latest_version=current) for f in fragments]
        Solver().retrieve(buffer, "insert_wait", TABLE, fragments)
        stats = stats_once(learner, "updates", "an update on the fresh fragments")
    finally:
        final = learner.call_all("stop")[0]
    assert learner.call_all("checkpoint", {"env_steps": 7}, {"run_id": "r"}) == [1]
    assert stats["dropped_fragments"] == BATCH and stats["consumed_steps"] == BATCH * 16
    assert final["updates"] == 1 and final["snapshots"] == 1 and final["error"] is None
    assert final["version"] == current + 1
    published_version, published = subscribe(topic).latest()
    assert published_version == final["version"]

    # dump_model_every=1: the update's weights went to the model pool, keyed by their version
    assert Solver().retrieve(pool, "list", "main") == [ModelKey("main", final["version"])]
    snapshot = Solver().retrieve(pool, "pull_latest", "main")
    assert snapshot.metadata["updates"] == 1
    assert snapshot.metadata["param_version"] == final["version"]
    assert_same_weights(snapshot.weights, published)

    # the final checkpoint holds the same weights, bit for bit, and the counters
    checkpoint = RunDir.open(run_dir.path).latest_checkpoint()
    assert checkpoint is not None and checkpoint.step == 1
    counters = checkpoint.state["counters"]
    assert counters["updates"] == 1 and counters["dropped_fragments"] == BATCH
    assert counters["version"] == final["version"]
    assert checkpoint.state["progress"] == {"env_steps": 7} and checkpoint.state["run"]["run_id"] == "r"
    state = unflatten_state(checkpoint.tensors, checkpoint.state["skeleton"])
    assert_same_weights(state["policy"], published)
    initial = cartpole_policy(SCRIPTS.seed).get_weights()  # what the learner started from
    assert not all(np.array_equal(published[k], v) for k, v in initial.items())


@pytest.mark.slow
def test_parameters_lost_with_the_learner_process_do_not_break_subscribers(
        ray_only: str) -> None:
    launch(ReplayBufferService, args=([fifo_table()],))
    learner = launch(Learner, args=(LearnerSettings(SCRIPTS, CARTPOLE_PPO, BATCH),))
    topic = params_topic("main")
    before = subscribe(topic).latest()[0]
    learner.call_all("run")
    wait_until(lambda: subscribe(topic).latest()[0] > before, what="the learner's publish")
    learner.call_all("stop")
    learner.shutdown()
    # the newest value lived in the learner's process: once Ray notices it is gone the value
    # is lost, and subscribers (a worker of the next run) see none instead of an error
    wait_until(lambda: subscribe(topic).latest() == (0, None), what="the value to be lost")
    assert subscribe(topic).wait_newer(0, timeout_s=0.5) is None
    weights = cartpole_policy(3).get_weights()
    version = publish(topic, weights)
    found = subscribe(topic).wait_newer(0, timeout_s=10)
    assert found is not None and found[0] == version
    assert_same_weights(found[1], weights)
