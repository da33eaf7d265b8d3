"""Run directories the dashboard tests read: a short seeded tic-tac-toe league (local mode) and
an exact PSRO run on Kuhn poker, each made once per session by ``msagent``'s own training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.rundir import RunDir
from msagent.league.payoff import PayoffTable
from msagent.train import run_training
from tests.train.helpers import train_until
from tests.train.league_helpers import league_config

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def league_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short league (three players, two bots, an evaluator) of seed 0, stopped once its feed
    shows what the dashboard tests read (a fixed time fell short on a loaded machine)."""
    root = tmp_path_factory.mktemp("league_runs")
    cfg = league_config(root, "local", "run.stop.time_s=120", "run.seed=0",
                        "services.evaluator.num=1")
    run_dir = RunDir.create(root, cfg.run.name)
    train_until(cfg, run_dir, lambda: _league_shown(run_dir.path), 120,
                "a league of 8 participants, 4 trusted payoff pairs, evaluations and 2 ratings")
    return run_dir.path


def _league_shown(run: Path) -> bool:
    """Whether the run's feed holds enough league for the dashboard tests: at least 8
    participants (3 players, 2 bots, 3 snapshots), 4 pairs past the payoff's ``min_games``,
    evaluation rows and 2 points of the ratings timeline."""
    try:
        state = feed_state(run)
        timeline = (run / "feed" / "timeline.jsonl").read_text().splitlines()
    except (OSError, ValueError):
        return False
    league = state.get("league")
    if not league or not state.get("eval") or len(timeline) < 2:
        return False
    table = PayoffTable()
    table.load_state_dict(league["payoff"])
    trusted = [pair for pair in league["payoff"]["pairs"]
               if sum(table.counts(pair[0], pair[1])) >= table.min_games]
    return len(league["historical"]) >= 3 and len(trusted) >= 4


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
