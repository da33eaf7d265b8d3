"""Run directories the dashboard tests read: a short seeded tic-tac-toe league (local mode) and
an exact PSRO run on Kuhn poker, each made once per session by ``msagent``'s own training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.rundir import RunDir
from msagent.train import run_training
from tests.train.league_helpers import league_config

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def league_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12-second league (three players, two bots, an evaluator) of seed 0."""
    root = tmp_path_factory.mktemp("league_runs")
    cfg = league_config(root, "local", "run.stop.time_s=12", "run.seed=0",
                        "services.evaluator.num=1")
    run_dir = RunDir.create(root, cfg.run.name)
    run_training(cfg, run_dir)
    return run_dir.path


@pytest.fixture(scope="session")
def psro_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Exact PSRO on Kuhn poker, 8 iterations."""
    root = tmp_path_factory.mktemp("psro_runs")
    cfg = load_config(REPO / "examples" / "kuhn_psro.toml", [
        f"run.root={json.dumps(str(root))}", "league.psro.iterations=8",
        "league.psro.nash_conv=0.0", "logging.tensorboard=false"])
    run_dir = RunDir.create(root, cfg.run.name)
    run_training(cfg, run_dir)
    return run_dir.path


def feed_state(run: Path) -> dict:
    """The run's ``feed/state.json``."""
    return json.loads((run / "feed" / "state.json").read_text())
