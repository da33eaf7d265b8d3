"""Central inference: the server follows parameters in the background; start-up figures."""

from __future__ import annotations

import threading
import time

from msagent.runtime import Solver, launch, publish
from msagent.services.env_worker import EnvWorker, WorkerSettings
from msagent.services.inference import InferenceServer, mean_batch_size
from msagent.services.params import params_topic
from msagent.services.replay_buffer import ReplayBufferService
from msagent.vocabulary import ModelKey, PredictRequest
from tests.services.helpers import SCRIPTS, cartpole_obs, cartpole_policy, fifo_table, wait_until


def ask(server, min_version: int = 0) -> ModelKey:
    """The key of the policy that answered a request for the newest parameters."""
    request = PredictRequest(cartpole_obs(3), "main", min_version=min_version)
    return Solver().retrieve(server, "predict", request).key


def test_server_picks_up_new_parameters_without_asking_the_topic_per_request(
        backend: str) -> None:
    server = launch(InferenceServer, name="InferenceServer", args=(SCRIPTS,))
    first = publish(params_topic("main"), cartpole_policy(1).get_weights())
    assert ask(server, min_version=first) == ModelKey("main", first)
    second = publish(params_topic("main"), cartpole_policy(2).get_weights())
    # no request asks for the new version: the server's follower thread brings it anyway
    wait_until(lambda: ask(server) == ModelKey("main", second), what="the second version")


def test_a_request_for_a_future_version_waits_for_its_publish(backend: str) -> None:
    server = launch(InferenceServer, name="InferenceServer", args=(SCRIPTS,))
    first = publish(params_topic("main"), cartpole_policy(1).get_weights())
    assert ask(server, min_version=first) == ModelKey("main", first)
    threading.Timer(0.3, publish, args=(params_topic("main"),
                                        cartpole_policy(2).get_weights())).start()
    start = time.perf_counter()
    assert ask(server, min_version=first + 1) == ModelKey("main", first + 1)
    assert time.perf_counter() - start >= 0.2


def test_mean_batch_size_over_instances() -> None:
    stats = [{"batch_sizes": {"predict": {1: 2, 2: 4}}},
             {"batch_sizes": {"predict": {"3": 2}}}, {"batch_sizes": {}}]
    assert mean_batch_size(stats) == (2 + 8 + 6) / 8
    assert mean_batch_size([{"batch_sizes": {"predict": {}}}]) is None


def test_a_worker_reports_when_it_took_its_first_step(inline_only: str) -> None:
    launch(ReplayBufferService, args=([fifo_table()],))
    launch(InferenceServer, name="InferenceServer", args=(SCRIPTS,))
    workers = launch(EnvWorker, args=(WorkerSettings(SCRIPTS, 2, 4, central=True, sync=True),))
    (before,) = workers.call_all("drain")
    assert before["first_step_time"] is None
    workers.call_all("run")
    try:
        publish(params_topic("main"), cartpole_policy(1).get_weights())
        started = time.time()
        first = wait_until(lambda: workers.call_all("drain")[0]["first_step_time"],
                           what="the first step")
        assert started - 5.0 < first <= time.time()
    finally:
        assert all(workers.call_all("stop", timeout_s=10.0))


def test_a_server_for_one_worker_answers_unbatched_requests() -> None:
    from msagent.runtime.spec import registered_methods
    from msagent.services.inference import configured

    spec = registered_methods(configured(1, 0.0))["predict"]
    assert spec.batch == 1 and spec.direct  # one request in, one answer out
    assert registered_methods(configured(3, 0.0))["predict"].batch == 3
