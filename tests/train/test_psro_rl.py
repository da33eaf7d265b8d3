"""PSRO with the RL oracle, end to end on Kuhn poker: best responses trained with PPO through
the league, exact entries from the networks, NashConv falling; a resumed run keeps its
population and meta-game."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from open_spiel.python.algorithms import exploitability

from msagent.config import dump_config, load_config
from msagent.psro import exact
from msagent.exporting.tabular_export import export_mixture
from msagent.psro.game_tree import build_tree
from msagent.psro.neural import InfostateInputs
from msagent.psro.tabular_io import read_policy, to_openspiel
from msagent.psro.state import PSROState
from msagent.league_db import DATABASE_NAME
from msagent.rundir import RunDir
from msagent.services.learner import LEAGUE_REQUIRED_KEYS
from msagent.train import run_training
from msagent.train.resume import plan_resume
from msagent.user_scripts import build_policy
from msagent.vocabulary import PolicyRef

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kuhn_psro_rl.toml"


def kuhn_rl(root: Path, *overrides: str):
    """``examples/kuhn_psro_rl.toml``, quiet and small, in one process."""
    return load_config(EXAMPLE, [
        f"run.root={json.dumps(str(root))}", 'run.mode="local"', "logging.progress=false",
        "logging.tensorboard=false", "run.stop.time_s=240", *overrides])


def psro_state(run_dir: RunDir) -> PSROState:
    """The PSRO state of the newest league checkpoint."""
    state = run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS).state["league"]["psro"]["state"]
    return PSROState.from_json(state)


@pytest.mark.slow
def test_seeded_rl_psro_on_kuhn_lowers_nash_conv(inline_only: str, tmp_path: Path,
                                                 capsys) -> None:
    cfg = kuhn_rl(tmp_path, "league.psro.iterations=4", "league.psro.episodes_per_br=8000")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_dir.write_config(dump_config(cfg))  # as msagent train does; export reads it
    result = run_training(cfg, run_dir)
    printed = capsys.readouterr().out
    gaps = [float(m.group(1)) for m in re.finditer(r"br gap (-?[0-9.]+)", printed)]
    psro = result["psro"]
    curve = [nc for _, _, nc in psro["curve"]]
    assert psro["iterations"] == 4 and result["stop_reason"] == "psro_iterations"
    assert curve[0] == pytest.approx(0.9156, abs=0.05)  # a fresh network is near uniform
    assert min(curve[1:]) <= 0.6, curve  # uniform random is 0.917; Nash is 0
    episodes = [e for _, e, _ in psro["curve"]]
    assert all(b - a >= 8000 for a, b in zip(episodes[:-1], episodes[1:])), episodes
    assert psro["eval_games"] == 0  # Kuhn's entries are exact
    # the oracle's gap to exact best responses: one per iteration after the first, never
    # negative, and the first response gains on the initial net (gap below its NashConv)
    assert len(gaps) == 4 and min(gaps) >= -1e-9 and gaps[0] < curve[0], gaps
    # The exported mixture of networks, measured by OpenSpiel itself.
    path, nash_conv, iteration = export_mixture(run_dir, tmp_path / "mix.json")
    game, tabular = to_openspiel(read_policy(path))
    assert iteration == 4 and nash_conv == pytest.approx(curve[-1], abs=1e-9)
    assert exploitability.nash_conv(game, tabular) == pytest.approx(curve[-1], abs=1e-9)
    # every iteration and its NashConv in the league database
    with sqlite3.connect(run_dir.path / DATABASE_NAME) as db:
        kept = db.execute("select iteration, nash_conv from psro_iterations "
                          "order by iteration").fetchall()
    assert [i for i, _ in kept] == list(range(5))
    assert [nc for _, nc in kept] == pytest.approx(curve)


@pytest.mark.slow
def test_resumed_rl_psro_keeps_population_and_meta_game(inline_only: str, tmp_path: Path,
                                                        capsys) -> None:
    cfg = kuhn_rl(tmp_path, "league.psro.iterations=2", "league.psro.episodes_per_br=3000")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_training(cfg, run_dir)
    before = psro_state(run_dir)
    assert before.iteration == 2 and len(before.populations[0]) == 3
    more = kuhn_rl(tmp_path, "league.psro.iterations=3", "league.psro.episodes_per_br=3000")
    capsys.readouterr()
    result = run_training(more, run_dir, plan_resume(more, run_dir))
    printed = capsys.readouterr().out
    assert "psro resumed at iteration 2" in printed and "psro iteration    1 " not in printed
    assert "psro iteration    3 " in printed
    after = psro_state(run_dir)
    assert result["psro"]["iterations"] == 3
    assert after.populations[0][:3] == before.populations[0]
    np.testing.assert_array_equal(after.payoffs[:, :3, :3], before.payoffs)
    assert [r.nash_conv for r in after.history[:3]] == [r.nash_conv for r in before.history]


@pytest.mark.slow
def test_per_seat_rl_psro_trains_one_best_response_per_seat(inline_only: str,
                                                           tmp_path: Path) -> None:
    cfg = kuhn_rl(tmp_path, "league.psro.iterations=2", "league.psro.episodes_per_br=4000",
                  "league.psro.symmetric=false")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result = run_training(cfg, run_dir)
    state = psro_state(run_dir)
    assert state.populations[0][0].startswith("br_0:") and len(state.populations) == 2
    assert [len(p) for p in state.populations] == [3, 3]
    assert all(m.startswith("br_1:") for m in state.populations[1])
    curve = [nc for _, _, nc in result["psro"]["curve"]]
    assert len(curve) == 3 and min(curve[1:]) < curve[0]
    assert set(result["league"]["players"]) == {"br_0", "br_1"}


@pytest.mark.slow
def test_greedy_members_are_measured_as_the_pure_strategies_they_play(inline_only: str,
                                                                     tmp_path: Path) -> None:
    cfg = kuhn_rl(tmp_path, "league.psro.iterations=2", "league.psro.episodes_per_br=4000",
                  'league.psro.member_play="greedy"')
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_dir.write_config(dump_config(cfg))
    curve = [nc for _, _, nc in run_training(cfg, run_dir)["psro"]["curve"]]
    # iteration 0: the initial network alone, played by its most likely actions
    first = psro_state(run_dir).populations[0][0]
    policy = build_policy(cfg.scripts.env, cfg.scripts.agent, cfg.env, 0)
    policy.set_weights(run_dir.snapshots.load(PolicyRef.parse(first).key))
    game = pyspiel.load_game("kuhn_poker")
    tree = build_tree(game)
    inputs = InfostateInputs(game, tree)
    pure = [np.eye(tree.legal[s].shape[1])[policy.act(inputs.obs[s], tree.legal[s], True).actions]
            for s in range(2)]
    assert curve[0] == pytest.approx(exact.nash_conv(tree, pure), abs=1e-9)
    assert abs(curve[0] - 0.9156) > 0.05  # not the sampling network's near-uniform value
    # (two tiny greedy responses need not lower it: learning is measured by benchmarks/psro.py)
    path, nash_conv, _ = export_mixture(run_dir, tmp_path / "mix.json")
    assert nash_conv == pytest.approx(curve[-1], abs=1e-9)
    game, tabular = to_openspiel(read_policy(path))  # and OpenSpiel agrees
    assert exploitability.nash_conv(game, tabular) == pytest.approx(curve[-1], abs=1e-9)
