"""The InferenceServer: several policies by ModelKey, its LRU cache, and batching."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from msagent.envs import Acted
from msagent.policy import Policy
from msagent.runtime import ServiceHandle, Solver, launch, publish
from msagent.services.inference import InferenceServer, configured
from msagent.services.model_pool import ModelPoolService
from msagent.services.params import params_topic
from msagent.vocabulary import ModelKey, PredictRequest
from tests.services.helpers import SCRIPTS, cartpole_obs, cartpole_policy


def predict(server: ServiceHandle, obs: np.ndarray, version: int | None = None) -> Acted:
    """Ask the server for actions of policy ``main`` (a frozen version, or the newest)."""
    return Solver().retrieve(server, "predict", PredictRequest(obs, "main", version=version))


def assert_answer_of(policy: Policy, obs: np.ndarray, answer: Acted) -> None:
    """Fail unless ``answer`` is what ``policy`` gives: its values, its log-probs of the actions."""
    assert answer.out.actions.shape == (len(obs),)
    logp, _, values = policy.evaluate(obs, answer.out.actions)
    np.testing.assert_allclose(answer.out.values, values.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(answer.out.logp, logp.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cache_size, pulls", [(1, 4), (2, 2)])
def test_server_answers_with_each_requested_snapshot(inline_only: str, cache_size: int,
                                                     pulls: int) -> None:
    pool = launch(ModelPoolService)
    policies = {seed: cartpole_policy(seed) for seed in (11, 12)}
    keys = {seed: Solver().retrieve(pool, "push", "main", p.get_weights())
            for seed, p in policies.items()}
    assert keys == {11: ModelKey("main", 1), 12: ModelKey("main", 2)}
    server = launch(InferenceServer, args=(SCRIPTS, cache_size))
    obs = cartpole_obs(6)
    values = {seed: p.act(obs, deterministic=True).values for seed, p in policies.items()}
    assert not np.allclose(values[11], values[12])  # the two snapshots are told apart

    for seed in (11, 12, 11, 12):  # alternating: with one cache slot every request misses
        answer = predict(server, obs, version=keys[seed].version)
        assert answer.key == keys[seed]
        assert_answer_of(policies[seed], obs, answer)
    assert pool.stats()[0]["calls"]["pull"] == pulls


def test_concurrent_requests_are_batched_and_each_gets_its_rows(inline_only: str) -> None:
    policy = cartpole_policy(21)
    version = publish(params_topic("main"), policy.get_weights())
    server = launch(configured(batch=8, max_wait_ms=100.0), name="InferenceServer",
                    args=(SCRIPTS,))
    requests = [cartpole_obs(rows, seed=rows) for rows in range(1, 7)]
    answers: list[Any] = [None] * len(requests)
    start = threading.Barrier(len(requests))

    def ask(i: int) -> None:
        start.wait()
        answers[i] = predict(server, requests[i])

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    for obs, answer in zip(requests, answers):
        assert answer is not None and answer.key == ModelKey("main", version)
        assert_answer_of(policy, obs, answer)
    (stats,) = server.stats()
    sizes = stats["batch_sizes"]["predict"]
    assert sum(size * count for size, count in sizes.items()) == len(requests)
    assert max(sizes) > 1, sizes
