"""SIGKILL during a Ray-mode league run: a killed env worker and evaluator are replaced and the
league goes on; a killed learner stops the run naming it, and ``--resume`` continues the same
league."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from msagent.config import TrainConfig
from msagent.errors import ServiceDiedError
from msagent.rundir import RunDir
from msagent.train import run_training
from msagent.train.league_plan import league_snapshot_keys
from msagent.train.resume import plan_resume
from tests.services.helpers import wait_until
from tests.train.helpers import feed_state, train_until
from tests.train.league_helpers import league_config
from tests.train.test_faults import handle_of
from tests.train.test_league_runs import KUHN_ENV, smallest_league


class LeagueBackground:
    """A league ``run_training`` in a thread (the test kills processes meanwhile)."""

    def __init__(self, tmp_path: Path, *overrides: str, cfg: TrainConfig | None = None) -> None:
        self.cfg = cfg or league_config(tmp_path, "ray", "services.evaluator.num=0",
                                        "services.learner.checkpoint_every_s=3", *overrides)
        self.run_dir = RunDir.create(self.cfg.run.root, self.cfg.run.name)
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.result = run_training(self.cfg, self.run_dir, False)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    @property
    def alive(self) -> bool:
        """Whether the run is still going."""
        return self._thread.is_alive()

    def join(self, timeout_s: float = 150) -> None:
        """Wait for the run to end."""
        self._thread.join(timeout_s)
        assert not self._thread.is_alive(), "the run did not end"


def kill_when_training(service: str) -> None:
    """SIGKILL the first instance of ``service`` once main's learner has updated twice."""
    def updates() -> int:
        handle = handle_of("Learner-main")
        return handle.call_all("stats")[0]["updates"] if handle else 0
    wait_until(lambda: updates() >= 2, timeout_s=120, what="league training to start")
    os.kill(handle_of(service).placements()[0]["pid"], signal.SIGKILL)


@pytest.mark.slow
def test_a_league_replaces_killed_actors_stops_on_a_killed_learner_and_resumes(
        ray_only: str, tmp_path: Path) -> None:
    """A Kuhn poker league (two env workers) whose evaluator measures NashConv every second
    (one run for all three parts: a league takes long to start).

    An env worker and the evaluator killed at once are each replaced: the new env worker takes
    steps and the new evaluator's measures reach the driver. Then a killed learner stops the
    run naming it, and a resume from the last complete checkpoint (league and snapshots
    included) plays on past it."""
    cfg = smallest_league(tmp_path, KUHN_ENV, 'run.mode="ray"', "run.stop.time_s=400",
                          "services.env_worker.num=2", "services.evaluator.nash_conv_every_s=1",
                          "services.learner.checkpoint_every_s=3")
    run = LeagueBackground(tmp_path, cfg=cfg)
    kill_when_training("EnvWorker")
    os.kill(handle_of("Evaluator").placements()[0]["pid"], signal.SIGKILL)
    killed_at = time.time()

    def measured_since() -> bool:
        found = feed_state(run.run_dir).get("nash_conv", {}).get("main")
        return bool(found) and found["time"] > killed_at + 1

    def both_back() -> bool:
        back = {r["service"] for r in feed_state(run.run_dir).get("replacements", [])
                if r["back_s"] is not None}
        return {"EnvWorker", "Evaluator"} <= back and measured_since()

    wait_until(lambda: both_back() or not run.alive, timeout_s=150,  # a loaded CI box
               what="the replacement env worker back and a NashConv measure by the new evaluator")
    assert run.alive, run.error
    replaced = {r["service"]: r for r in feed_state(run.run_dir)["replacements"]}
    assert len(replaced) == 2, replaced
    worker, evaluator = replaced["EnvWorker"], replaced["Evaluator"]
    assert worker["dead"] == "EnvWorker#0" and worker["back_s"] is not None, worker
    assert evaluator["dead"] == "Evaluator#0" and evaluator["new"], evaluator

    wait_until(lambda: (feed_state(run.run_dir).get("league") or {}).get("historical"),
               timeout_s=60, what="a league snapshot")
    os.kill(handle_of("Learner-main_exploiter").placements()[0]["pid"], signal.SIGKILL)
    run.join()
    assert isinstance(run.error, ServiceDiedError), run.error
    assert "Learner-main_exploiter" in str(run.error)
    plan = plan_resume(run.cfg, run.run_dir)  # the last complete checkpoint, league included
    assert {p["id"] for p in plan.league["players"]} == {"main", "main_exploiter"}
    assert plan.league["historical"], "the league's snapshots were checkpointed"
    assert not run.run_dir.snapshots.missing(league_snapshot_keys(plan.league))
    # 10 s more than the checkpoint's elapsed time (time_s counts the run's whole time)
    more = plan.progress.get("elapsed_s", 0.0) + 10.0
    # stopped (STOP file) once the resumed run's feed shows matches past the checkpoint's,
    # not after the whole 10 s
    resumed_at = time.time()

    def matches_past_checkpoint() -> bool:
        feed = feed_state(run.run_dir)  # the killed run's last feed is older than resumed_at
        return (feed.get("written_s", 0) > resumed_at
                and (feed.get("league") or {}).get("reported", 0) > plan.league["reported"])

    resumed = train_until(run.cfg.model_copy(update={"run": run.cfg.run.model_copy(
        update={"stop": run.cfg.run.stop.model_copy(update={"time_s": more})})}),
        run.run_dir, matches_past_checkpoint, 120, "matches past the checkpoint's",
        resume=plan)
    assert resumed["league"]["summary"]["historical"] >= len(plan.league["historical"])
    assert resumed["league"]["summary"]["matches"] > plan.league["reported"]
