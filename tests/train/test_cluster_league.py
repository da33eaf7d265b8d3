"""A league on a simulated three-node Ray cluster: services placed by the TOML's resources,
a worker node removed mid-run (its env workers replaced on the other), and a resume after the
whole cluster (head included) was shut down, on a new one-node cluster."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msagent.rundir import RunDir
from msagent.runtime import solver, state
from msagent.services.learner import LEAGUE_REQUIRED_KEYS
from msagent.train import run_training
from msagent.train.resume import plan_resume
from msagent.train.signals import STOP_FILE_REASON
from tests.conftest import forget_ray_backend
from tests.train.helpers import stop_when
from tests.train.league_helpers import EQUAL_SHARES, league_config

HEAD = {"msagent_head": 1.0, "msagent_learner": 1.0}
ENV = {"msagent_env": 1.0}
PLACEMENT = [
    "services.env_worker.num=2", "services.env_worker.resources.spread=true",
    "services.env_worker.resources.custom={msagent_env = 0.01}",
    "services.learner.resources.custom={msagent_learner = 0.01}",
    "services.league.resources.custom={msagent_head = 0.01}",
    "services.model_pool.resources.custom={msagent_head = 0.01}",
    "services.buffer.resources.custom={msagent_head = 0.01}",
    "services.evaluator.num=0", "services.env_worker.max_restarts=4",
    EQUAL_SHARES,  # every player's version moves in the 12 s resumed
]


class ThreeNodes:
    """A head (league, pool, buffers, learners) and two env nodes, all on 127.0.0.1; with
    ``env_nodes=0``, a one-node cluster whose head has the env nodes' resources too."""

    def __init__(self, env_nodes: int = 2) -> None:
        from ray.cluster_utils import Cluster

        forget_ray_backend()
        head = {"num_cpus": 2, "resources": HEAD} if env_nodes else \
            {"num_cpus": 4, "resources": {**HEAD, **ENV}}
        self.cluster = Cluster(initialize_head=True, head_node_args=head)
        self.env_nodes = [self.cluster.add_node(num_cpus=1, resources=ENV)
                          for _ in range(env_nodes)]
        self.cluster.wait_for_nodes()
        self.backend = state.init(backend="ray", address=self.cluster.address)
        self.closed = False

    def node_id(self, node: Any) -> str:
        """The Ray node id of a node the cluster started."""
        return node.node_id

    def close(self) -> None:
        """Stop msagent's backend and every node (once: a test may close it early)."""
        if self.closed:
            return
        self.closed = True
        self.backend.shutdown()
        state.attach(None)  # type: ignore[arg-type]
        solver.forget_routes()
        self.cluster.shutdown()


@pytest.fixture
def cluster() -> Iterator[ThreeNodes]:
    """A fresh three-node cluster for the test."""
    nodes = ThreeNodes()
    try:
        yield nodes
    finally:
        nodes.close()


def _feed(run: Path) -> dict:
    """The run's dashboard feed (where the driver records placements)."""
    return json.loads((run / "feed" / "state.json").read_text())


def _wait(predicate: Any, timeout_s: float) -> None:
    """Poll until ``predicate()`` holds (a clear failure otherwise)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {predicate}")


def _all_back(run: Path) -> bool:
    """Whether the env workers of the lost node were replaced and took steps again."""
    replacements = _feed(run)["replacements"]
    return bool(replacements) and all(r["back_s"] is not None for r in replacements)


@pytest.mark.slow
def test_a_league_is_placed_survives_a_lost_node_and_resumes_on_a_new_cluster(
        cluster: ThreeNodes, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "ray", "run.stop.time_s=300", *PLACEMENT)  # a cap only
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result: dict[str, Any] = {}
    runner = threading.Thread(target=lambda: result.update(run_training(cfg, run_dir)))
    runner.start()
    _wait(lambda: _feed(run_dir.path)["progress"]["env_steps"] > 0, 150)  # a loaded CI box
    placed = _feed(run_dir.path)["placements"]
    head = cluster.cluster.head_node.node_id
    env_ids = {cluster.node_id(n) for n in cluster.env_nodes}
    assert {p["node"] for p in placed["EnvWorker"]} == env_ids  # spread over both env nodes
    for service in ("LeagueService", "ModelPoolService", "ReplayBufferService",
                    "Learner-main", "Learner-main_exploiter", "Learner-league_exploiter"):
        assert {p["node"] for p in placed[service]} == {head}, service
    lost = cluster.env_nodes[0]
    cluster.cluster.remove_node(lost, allow_graceful=True)
    survivor = cluster.node_id(cluster.env_nodes[1])
    _wait(lambda: len(_feed(run_dir.path)["replacements"]) >= 1, 120)  # a loaded CI box
    steps_after_loss = _feed(run_dir.path)["progress"]["env_steps"]
    # the lost worker replaced and back, then stop (no padded time_s)
    stop_when(run_dir, lambda: _all_back(run_dir.path) or not runner.is_alive(), 60,
              "the replacements")
    runner.join(timeout=120)
    assert not runner.is_alive() and result["stop_reason"] == STOP_FILE_REASON, result
    final = _feed(run_dir.path)
    assert {p["node"] for p in final["placements"]["EnvWorker"]} == {survivor}
    assert len(final["placements"]["EnvWorker"]) == 2  # both replaced, on the remaining node
    assert result["env_steps"] > steps_after_loss
    assert {r["service"] for r in result["replacements"]} == {"EnvWorker"}

    versions = {p: f["version"] for p, f in result["league"]["players"].items()}
    cluster.close()
    restarted = ThreeNodes(env_nodes=0)  # a new cluster: one node (it starts faster)
    try:
        again = league_config(tmp_path, "ray", f"run.stop.time_s={result['elapsed_s'] + 12}",
                              *PLACEMENT)  # 12 s more
        plan = plan_resume(again, run_dir)
        second = run_training(again, run_dir, plan)
    finally:
        restarted.close()
    for player, version in versions.items():
        assert second["league"]["players"][player]["version"] > version
    league = run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS).state["league"]
    assert league["reported"] > plan.league["reported"]
