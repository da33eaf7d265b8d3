"""``msagent train`` with ``[league.psro]``, ``--resume`` and ``msagent export``, end to end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from open_spiel.python.algorithms import exploitability
from typer.testing import CliRunner

from msagent.cli import USER_ERROR_EXIT, app
from msagent.psro.state import PSROState
from msagent.psro.tabular_io import read_policy, to_openspiel
from msagent.rundir import RunDir

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
OPENSPIEL = REPO / "examples" / "openspiel"


def psro_toml(root: Path, game: str = "kuhn_poker", psro: str = "", stop: str = "") -> str:
    """A PSRO config on an OpenSpiel game, run directories under ``root``."""
    return f"""
[run]
name = "psro"
root = {json.dumps(str(root))}
{stop}
[scripts]
env = {json.dumps(str(OPENSPIEL / "openspiel_env.py"))}
agent = {json.dumps(str(OPENSPIEL / "openspiel_agent.py"))}
[env]
game = "{game}"
[league.psro]
checkpoint_every = 2
{psro}
"""


def train(tmp_path: Path, text: str, *args: str):
    """``msagent train`` on ``text``; the CLI result and the newest run directory."""
    config = tmp_path / "psro.toml"
    config.write_text(text)
    result = runner.invoke(app, ["train", str(config), *args])
    runs = sorted((tmp_path / "runs").glob("psro-*"))
    return result, (runs[-1] if runs else None)


def test_kuhn_psro_prints_nash_conv_and_exports_a_policy_openspiel_accepts(tmp_path):
    result, run_dir = train(tmp_path, psro_toml(tmp_path / "runs", psro="iterations = 12\n"
                                                                       "nash_conv = 0.001"))
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("psro iteration")]
    assert len(lines) >= 3 and "NashConv 0.9167" in lines[0]
    assert "meta entropy 0.00/0.00" in lines[0]  # one member each: not "-0.00"
    final = json.loads((run_dir / "checkpoints").glob("*.json").__next__().read_text())
    assert "psro" in final
    game, tabular = to_openspiel(read_policy(run_dir / "psro_policy.json"))
    assert exploitability.nash_conv(game, tabular) <= 0.001
    out = tmp_path / "mixture.json"
    exported = runner.invoke(app, ["export", str(run_dir), str(out), "--format", "openspiel"])
    assert exported.exit_code == 0, exported.output
    game, tabular = to_openspiel(read_policy(out))
    assert exploitability.nash_conv(game, tabular) <= 0.001


def test_resume_continues_with_the_same_population_and_payoffs(tmp_path):
    text = psro_toml(tmp_path / "runs", "leduc_poker", "iterations = 4")
    first, run_dir = train(tmp_path, text)
    assert first.exit_code == 0, first.output
    before = PSROState.from_json(RunDir.open(run_dir).latest_checkpoint().state["psro"])
    again, _ = train(tmp_path, text.replace("iterations = 4", "iterations = 6"),
                     "--resume", str(run_dir))
    assert again.exit_code == 0, again.output
    assert "resumed PSRO at iteration 4" in again.output
    after = PSROState.from_json(RunDir.open(run_dir).latest_checkpoint().state["psro"])
    assert after.iteration == 6 and [p[:5] for p in after.populations] == before.populations
    np.testing.assert_array_equal(after.payoffs[:, :5, :5], before.payoffs)
    assert after.history[:5] == before.history
    # The same six iterations in one go give the same curve: resume is exact.
    fresh, _ = train(tmp_path, text.replace("iterations = 4", "iterations = 6"))
    assert fresh.exit_code == 0
    straight = PSROState.from_json(RunDir.open(sorted((tmp_path / "runs").glob("psro-*"))[-1])
                                   .latest_checkpoint().state["psro"])
    assert [r.nash_conv for r in straight.history] == [r.nash_conv for r in after.history]


def test_resume_with_a_changed_population_layout_is_refused(tmp_path):
    text = psro_toml(tmp_path / "runs", psro="iterations = 1")
    first, run_dir = train(tmp_path, text)
    assert first.exit_code == 0
    again, _ = train(tmp_path, text + "symmetric = true\n", "--resume", str(run_dir))
    assert again.exit_code == USER_ERROR_EXIT
    assert "the checkpoint's PSRO has symmetric = false, the config says true" in again.output


@pytest.mark.parametrize("psro, message", [
    ('solver = "fancy"', "unknown meta-solver 'fancy'"),
    ('oracle = "rl"\nsymmetric = true\n[services.evaluator]\nnum = 0', "services.evaluator.num >= 1"),
    ('solver = "prd"\n[league.psro.solver_params]\nsteps = 3', "steps"),
    ('solver = "missing.py:solve"', "script file not found"),
    ('member_play = "greedy"', 'member_play = "greedy" applies to oracle = "rl"'),
])
def test_bad_psro_settings_are_refused_by_name(tmp_path, psro, message):
    result, _ = train(tmp_path, psro_toml(tmp_path / "runs", psro=psro))
    assert result.exit_code == USER_ERROR_EXIT
    assert message in result.output


def test_per_seat_rl_psro_is_refused_for_a_three_seat_game(tmp_path):
    text = psro_toml(tmp_path / "runs", "kuhn_poker(players=3)",
                     'oracle = "rl"\nsolver = "prd"').replace(
        'name = "psro"', 'name = "psro"\nmode = "local"') + "[services.learner]\nsync = false\n"
    result, _ = train(tmp_path, text)
    assert result.exit_code == USER_ERROR_EXIT
    assert "this game has 3 seats: set symmetric = true" in result.output


@pytest.mark.parametrize("oracle", ["exact", "rl"])
def test_the_nash_solver_is_refused_for_three_players_before_a_run_directory_is_made(
        tmp_path, oracle):
    text = psro_toml(tmp_path / "runs", "kuhn_poker(players=3)", f'oracle = "{oracle}"')
    result, run_dir = train(tmp_path, text)
    assert result.exit_code == USER_ERROR_EXIT and run_dir is None
    assert "solver = 'nash' needs a two-player game" in result.output
    assert "makes one of 3; use 'prd' or 'alpharank'" in result.output


def test_a_user_meta_solver_script_is_used(tmp_path):
    (tmp_path / "solvers.py").write_text(
        "import numpy as np\n"
        "def first(payoffs):\n"
        "    return [np.eye(n)[0] for n in payoffs.shape[1:]]\n")
    result, run_dir = train(tmp_path, psro_toml(tmp_path / "runs", psro='solver = "solvers.py:first"'
                                                "\niterations = 3"))
    assert result.exit_code == 0, result.output
    state = PSROState.from_json(RunDir.open(run_dir).latest_checkpoint().state["psro"])
    assert all(m[0] == 1.0 for r in state.history for m in r.meta)


def test_exact_oracle_refuses_a_game_that_is_not_openspiel(tmp_path):
    (tmp_path / "env.py").write_text(
        "import gymnasium as gym\ndef make_env(**kwargs):\n    return gym.make('CartPole-v1')\n")
    text = psro_toml(tmp_path / "runs").replace(
        json.dumps(str(OPENSPIEL / "openspiel_env.py")), json.dumps(str(tmp_path / "env.py")))
    result, run_dir = train(tmp_path, text)
    assert result.exit_code == USER_ERROR_EXIT and run_dir is None
    assert "needs an OpenSpiel game" in result.output


def test_export_of_a_folder_without_psro_checkpoint_is_refused(tmp_path):
    result = runner.invoke(app, ["export", str(tmp_path), str(tmp_path / "x.json")])
    assert result.exit_code == USER_ERROR_EXIT
    assert "not an msagent run directory" in result.output


@pytest.mark.slow
@pytest.mark.parametrize("how,code,reason", [("SIGINT", 130, "SIGINT"),
                                              ("STOP", 0, "stop requested (STOP file)")])
def test_sigint_or_msagent_stop_ends_it_cleanly_with_a_checkpoint(tmp_path, how, code, reason):
    config = tmp_path / "psro.toml"
    config.write_text(psro_toml(tmp_path / "runs", "leduc_poker", "iterations = 100000"))
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
    proc = subprocess.Popen([sys.executable, "-m", "msagent", "train", str(config)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("psro iteration    3"):
            if how == "SIGINT":
                proc.send_signal(signal.SIGINT)
            else:
                (run,) = (tmp_path / "runs").glob("psro-*")
                assert runner.invoke(app, ["stop", str(run)]).exit_code == 0
            break
    out = "".join(seen) + proc.stdout.read()
    assert proc.wait(timeout=60) == code, out
    assert f"'stop_reason': '{reason}'" in out
    run_dir = sorted((tmp_path / "runs").glob("psro-*"))[-1]
    state = RunDir.open(run_dir).latest_checkpoint().state
    assert PSROState.from_json(state["psro"]).iteration >= 3


def test_league_and_evaluate_point_an_exact_psro_run_to_export(tmp_path):
    result, run_dir = train(tmp_path, psro_toml(tmp_path / "runs", psro="iterations = 1"))
    assert result.exit_code == 0
    for args in (["league", str(run_dir)],
                 ["evaluate", str(run_dir), "--opponent", "bot:random", "--games", "2"]):
        refused = runner.invoke(app, args)
        assert refused.exit_code == USER_ERROR_EXIT
        assert "PSRO run with the exact oracle" in refused.output and "msagent export" in \
            refused.output
