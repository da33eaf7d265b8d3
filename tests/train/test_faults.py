"""Real process deaths during Ray-mode training: SIGKILL one service process and watch.

An env worker or inference server is replaced and the run goes on; a learner, buffer or model
pool ends the run with an error naming it (after a final checkpoint where the learner lives).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from msagent.errors import ServiceDiedError
from msagent.rundir import RunDir
from msagent.runtime import state
from msagent.train import run_training
from msagent.train.signals import STOP_FILE_REASON
from tests.services.helpers import wait_until
from tests.train.helpers import example_config, feed_state, replacement_back, stop_when


class Background:
    """``run_training`` in a thread (the test's thread kills processes meanwhile)."""

    def __init__(self, tmp_path: Path, *overrides: str) -> None:
        cfg = example_config(tmp_path, "ray", "run.stop.mean_return=0",
                             "run.stop.env_steps=0", "services.learner.checkpoint_every_s=0",
                             *overrides)
        self.run_dir = RunDir.create(cfg.run.root, cfg.run.name)
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(cfg,), daemon=True)
        self._thread.start()

    def _run(self, cfg: Any) -> None:
        try:
            self.result = run_training(cfg, self.run_dir, False)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    @property
    def alive(self) -> bool:
        """Whether the run is still going."""
        return self._thread.is_alive()

    def join(self, timeout_s: float = 120) -> None:
        """Wait for the run to end."""
        self._thread.join(timeout_s)
        assert not self._thread.is_alive(), "the run did not end"


def handle_of(service: str) -> Any:
    """The Ray handle of a running service of this process's backend."""
    handles = [h for h in state.installed()._handles if h.name == service]  # type: ignore[attr-defined]
    return handles[0] if handles and handles[0].instance_ids() else None


def kill_when_training(service: str, run: Background) -> int:
    """SIGKILL the first instance of ``service`` once the learner has updated; its pid."""
    wait_until(lambda: handle_of("Learner") and _updates() >= 2, timeout_s=90,
               what="training to start")
    pid = handle_of(service).placements()[0]["pid"]
    os.kill(pid, signal.SIGKILL)
    return pid


def _stop_after_training_on(run: Background) -> None:
    """Once the replacement is back, let the learner update twice more, stop; wait for the end."""
    wait_until(lambda: replacement_back(run.run_dir) or not run.alive, timeout_s=90,
               what="the replacement")
    if run.alive:
        updates = _updates()
        stop_when(run.run_dir, lambda: _updates() >= updates + 2 or not run.alive, 60,
                  "training to go on")
    run.join()


def _updates() -> int:
    """The learner's update count."""
    return handle_of("Learner").call_all("stats")[0]["updates"]


@pytest.mark.slow
def test_a_killed_env_worker_and_inference_server_are_replaced_and_the_run_goes_on(
        ray_only: str, tmp_path: Path) -> None:
    """Central inference: an env worker and the inference server are killed at once (one run
    for both: a run takes long to start); each is replaced, the new worker takes steps through
    the new server, and the learner goes on."""
    run = Background(tmp_path, "run.stop.time_s=150", 'services.inference.mode="central"')
    kill_when_training("EnvWorker", run)
    os.kill(handle_of("InferenceServer").placements()[0]["pid"], signal.SIGKILL)

    def both_replaced() -> bool:
        found = {r["service"]: r for r in feed_state(run.run_dir).get("replacements", [])}
        return ("InferenceServer" in found and "EnvWorker" in found
                and found["EnvWorker"]["back_s"] is not None)

    wait_until(lambda: both_replaced() or not run.alive, timeout_s=90, what="the replacements")
    _stop_after_training_on(run)
    assert run.error is None, run.error
    replaced = {r["service"]: r for r in run.result["replacements"]}
    assert len(run.result["replacements"]) == 2, run.result["replacements"]
    worker, server = replaced["EnvWorker"], replaced["InferenceServer"]
    assert worker["dead"] == "EnvWorker#0" and worker["new"] == "EnvWorker#2"
    # back_s is until its first steps, through the new server; the bound is the wait's, as a
    # loaded CI box took 45 s to start both actors (the replacement itself is the subject)
    assert worker["back_s"] is not None and worker["back_s"] < 90, worker
    assert server["new"] == "InferenceServer#1", server
    assert run.result["stop_reason"] == STOP_FILE_REASON and run.result["updates"] > 2
    assert "starting a replacement" in run.run_dir.log_path.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("service", ["Learner", "ReplayBufferService", "ModelPoolService"])
def test_a_killed_stateful_service_stops_the_run_naming_it(ray_only: str, tmp_path: Path,
                                                           service: str) -> None:
    run = Background(tmp_path, "run.stop.time_s=90", "services.learner.dump_model_every=1")
    start = time.monotonic()
    kill_when_training(service, run)
    run.join()
    assert time.monotonic() - start < 60
    assert isinstance(run.error, ServiceDiedError), run.error
    assert f"service {service} died" in str(run.error)
    steps = run.run_dir.checkpoint_steps()
    if service == "Learner":
        assert steps == []  # it was the learner's state: nothing left to write
    else:
        assert steps and steps[-1] >= 2  # the learner lived: a final checkpoint was written
    assert f"service {service} died" in run.run_dir.log_path.read_text()
