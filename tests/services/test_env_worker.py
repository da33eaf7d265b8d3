"""The env worker in central-inference, sync mode, with a real InferenceServer and CartPole."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from msagent.runtime import ServiceHandle, Solver, launch, publish, register
from msagent.services.env_worker import EnvWorker, WorkerSettings
from msagent.services.inference import InferenceServer
from msagent.services.params import params_topic
from msagent.services.replay_buffer import ReplayBufferService
from msagent.vocabulary import ModelKey, PredictRequest
from tests.services.helpers import SCRIPTS, TABLE, cartpole_policy, fifo_table, wait_until

K, T = 4, 8
"""Envs per worker and steps per fragment."""


class RecordingInferenceServer(InferenceServer):
    """The real InferenceServer that also remembers how many observation rows each request had."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Build the server; no requests seen yet."""
        super().__init__(*args, **kwargs)
        self.rows: list[int] = []

    @register(batch=8, max_wait_ms=2.0)
    def predict(self, request: list[PredictRequest]) -> list[Any]:
        """Record each request's row count, then answer as the InferenceServer does."""
        self.rows.extend(len(r.obs) for r in request)
        return InferenceServer.predict(self, request)

    @register
    def request_rows(self) -> list[int]:
        """The row counts of all requests so far, in order."""
        return list(self.rows)


def inserted(buffer: ServiceHandle) -> int:
    """How many fragments the buffer service has received."""
    return Solver().retrieve(buffer, "stats", TABLE)["inserts"]


def predict_calls(server: ServiceHandle) -> int:
    """How many predict requests the inference server has answered."""
    return server.stats()[0]["calls"].get("predict", 0)


@contextmanager
def running(workers: ServiceHandle) -> Iterator[None]:
    """Start the workers' loops and always stop them, so no thread outlives the test."""
    workers.call_all("run")
    try:
        yield
    finally:
        assert all(workers.call_all("stop", timeout_s=10.0))


def test_central_worker_sends_one_request_per_step_and_waits_for_each_version(
        inline_only: str) -> None:
    buffer = launch(ReplayBufferService, args=([fifo_table()],))
    server = launch(RecordingInferenceServer, name="InferenceServer", args=(SCRIPTS,))
    workers = launch(EnvWorker, args=(WorkerSettings(SCRIPTS, K, T, central=True, sync=True),))
    first = publish(params_topic("main"), cartpole_policy(1).get_weights())
    with running(workers):
        wait_until(lambda: inserted(buffer) == K, what="the first round of fragments")
        # one request for the reset observations, then one per step, each with all K rows
        wait_until(lambda: predict_calls(server) == 1 + T, what="the first round's requests")
        round_one = Solver().retrieve(buffer, "sample", TABLE, K, 1.0)
        assert {item.item.policy for item in round_one} == {ModelKey("main", first)}
        assert all(len(item.item) == T for item in round_one)

        time.sleep(0.5)  # sync mode: without a new version the worker must not act again
        assert inserted(buffer) == K and predict_calls(server) == 1 + T

        second = publish(params_topic("main"), cartpole_policy(2).get_weights())
        wait_until(lambda: inserted(buffer) == 2 * K, what="the second round of fragments")
        round_two = Solver().retrieve(buffer, "sample", TABLE, K, 1.0)
        assert {item.item.policy for item in round_two} == {ModelKey("main", second)}
        # the pending actions were re-decided with the new version, then T steps
        wait_until(lambda: predict_calls(server) == 2 + 2 * T, what="the second round's requests")
    rows = Solver().retrieve(server, "request_rows")
    assert rows == [K] * (2 + 2 * T)
    assert server.stats()[0]["errors"] == {}
    (drained,) = workers.call_all("drain")
    assert drained["error"] is None and drained["env_steps"] == 2 * K * T
