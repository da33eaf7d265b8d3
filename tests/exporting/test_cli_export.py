"""``msagent export RUN_DIR --format onnx OUT``: a real run's policy, checked and published."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from typer.testing import CliRunner

from msagent.cli import USER_ERROR_EXIT, app
from msagent.client.onnx_policy import OnnxPolicy
from msagent.exporting.model_store import ModelStore
from msagent.exporting.onnx_export import check_parity
from msagent.exporting.run_export import load_run_policy, sample_game
from msagent.rundir import RunDir
from tests.exporting.helpers import EXAMPLES, TICTACTOE, gym_observations

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

REPO = EXAMPLES.parent
runner = CliRunner()

LEAGUE_TOML = """
[run]
name = "ttt_export"
seed = 0
root = {root}

[run.stop]
time_s = 5

[scripts]
env = {env}
agent = {agent}

[services.env_worker]
num = 1
num_envs = 8
fragment_len = 16

[services.learner]
sync = false
checkpoint_every_s = 60

[services.evaluator]
num = 0

[logging]
progress = false
tensorboard = false

[[league.players]]
id = "main"
role = "main"

[[league.players]]
id = "main_exploiter"
role = "main_exploiter"
"""


def train(args: list[str], root: Path) -> Path:
    """``msagent train ARGS --mode local``; the one run directory it made under ``root``."""
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    done = subprocess.run([sys.executable, "-m", "msagent", "train", *args, "--mode", "local"],
                          capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (found,) = list(root.iterdir())
    assert RunDir(found).checkpoint_steps(), "the run wrote no checkpoint"
    return found


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-update CartPole PPO run of the example config."""
    root = tmp_path_factory.mktemp("cartpole") / "runs"
    sets = [f"run.root={json.dumps(str(root))}", "run.stop.env_steps=1024",
            "logging.progress=false", "logging.tensorboard=false", "services.env_worker.num=1"]
    return train([str(EXAMPLES / "cartpole_ppo.toml"), *sum((["--set", s] for s in sets), [])],
                 root)


def train_league(base: Path, env: Path, agent: Path, extra: str = "") -> Path:
    """LEAGUE_TOML over the scripts (``extra`` TOML appended), trained; its run directory."""
    config = base / "league.toml"
    config.write_text(LEAGUE_TOML.format(root=json.dumps(str(base / "runs")),
                                         env=json.dumps(str(env)), agent=json.dumps(str(agent)))
                      + extra)
    return train([str(config)], base / "runs")


@pytest.fixture(scope="module")
def league_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few seconds of a two-player tic-tac-toe league (masked actions, a CNN)."""
    return train_league(tmp_path_factory.mktemp("league"), TICTACTOE / "tictactoe_env.py",
                        TICTACTOE / "tictactoe_agent.py")


def export(run: Path, out: Path, *args: str) -> tuple[int, str]:
    """``msagent export RUN --format onnx OUT ARGS``: (exit code, output)."""
    result = runner.invoke(app, ["export", str(run), "--format", "onnx", str(out), *args])
    return result.exit_code, result.output


def test_cartpole_export_matches_the_checkpoint_s_policy(cartpole_run: Path,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "cartpole.onnx"
    code, output = export(cartpole_run, out)
    assert code == 0, output
    data = out.read_bytes()
    manifest = json.loads((tmp_path / "cartpole.onnx.manifest.json").read_text())
    assert manifest["sha256"] == hashlib.sha256(data).hexdigest()
    assert manifest["size"] == len(data) and manifest["format"] == "onnx"
    assert manifest["opset"] <= 15 and onnx.load(out).opset_import[0].version <= 15
    assert [i["name"] for i in manifest["inputs"]] == ["obs"]  # CartPole gives no masks
    assert manifest["action"] == {"n": 2}
    step = RunDir(cartpole_run).checkpoint_steps()[-1]
    assert manifest["source"]["checkpoint_step"] == step
    assert manifest["source"]["policy"] == "main" and manifest["source"]["param_version"] >= 1

    policy, _, _ = load_run_policy(cartpole_run, "main")
    obs = gym_observations("CartPole-v1", 300, seed=4)
    assert check_parity(policy, data, feeds={"obs": obs}) <= 1e-5
    assert check_parity(policy, data) <= 1e-5
    client = OnnxPolicy(out, manifest)
    np.testing.assert_array_equal(client.act(obs, greedy=True)[0],
                                  policy.act(obs, deterministic=True).actions)


def test_the_export_holds_trained_weights_not_fresh_ones(cartpole_run: Path,
                                                         tmp_path: Path) -> None:
    from msagent.user_scripts import build_policy

    out = tmp_path / "m.onnx"
    assert export(cartpole_run, out)[0] == 0
    untrained = build_policy(str(EXAMPLES / "cartpole" / "cartpole_env.py"),
                             str(EXAMPLES / "cartpole" / "cartpole_agent.py"), {}, seed=0)
    assert check_parity(untrained, out.read_bytes()) > 1e-4


def test_publish_to_a_model_store(cartpole_run: Path, tmp_path: Path) -> None:
    store = tmp_path / "models"
    code, output = export(cartpole_run, tmp_path / "a.onnx", "--publish", str(store),
                          "--game", "cartpole")
    assert code == 0 and "published as cartpole v1" in output, output
    code, output = export(cartpole_run, tmp_path / "b.onnx", "--publish", str(store),
                          "--game", "cartpole")
    assert code == 0, output
    models = ModelStore(store)
    assert models.versions("cartpole") == [1, 2]
    assert models.read("cartpole", 2) == (tmp_path / "b.onnx").read_bytes()
    file_manifest = json.loads((tmp_path / "b.onnx.manifest.json").read_text())
    assert file_manifest == models.latest("cartpole").model_dump()


def test_league_players_export_with_masks(league_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "exploiter.onnx"
    code, output = export(league_run, out, "--policy", "main_exploiter")
    assert code == 0, output
    manifest = json.loads((tmp_path / "exploiter.onnx.manifest.json").read_text())
    assert manifest["inputs"][1] == {"name": "action_mask", "shape": ["batch", 9],
                                     "dtype": "bool"}
    assert manifest["inputs"][0]["shape"] == ["batch", 3, 3, 2]
    assert manifest["source"]["policy"] == "main_exploiter"
    sample = sample_game(str(TICTACTOE / "tictactoe_env.py"), {}, turns=100, seed=11)
    exploiter, _, _ = load_run_policy(league_run, "main_exploiter")
    assert check_parity(exploiter, out.read_bytes(), feeds=sample.feeds) <= 1e-5
    actions, _ = OnnxPolicy(out).act(sample.feeds["obs"], sample.feeds["action_mask"], rng=0)
    assert sample.feeds["action_mask"][np.arange(len(actions)), actions].all()


def test_unknown_policy_names_the_policies(league_run: Path, tmp_path: Path) -> None:
    code, output = export(league_run, tmp_path / "x.onnx", "--policy", "nobody")
    assert code == USER_ERROR_EXIT
    assert "unknown policy 'nobody'" in output and "main_exploiter" in output, output
    assert not (tmp_path / "x.onnx").exists()


def test_not_a_run_directory(tmp_path: Path) -> None:
    code, output = export(tmp_path, tmp_path / "x.onnx")
    assert code == USER_ERROR_EXIT and "not an msagent run directory" in output, output
    code, output = export(tmp_path / "absent", tmp_path / "x.onnx")
    assert code == USER_ERROR_EXIT and "does not exist" in output, output


def test_a_run_without_checkpoint(cartpole_run: Path, tmp_path: Path) -> None:
    empty = tmp_path / "run"
    shutil.copytree(cartpole_run, empty, ignore=shutil.ignore_patterns("checkpoints"))
    code, output = export(empty, tmp_path / "x.onnx")
    assert code == USER_ERROR_EXIT and "no checkpoint" in output, output


def test_store_options_are_checked(cartpole_run: Path, tmp_path: Path) -> None:
    code, output = export(cartpole_run, tmp_path / "x.onnx", "--publish", str(tmp_path / "s"))
    assert code == USER_ERROR_EXIT and "--publish needs --game" in output, output
    code, output = export(cartpole_run, tmp_path / "x.onnx", "--publish", str(tmp_path / "s"),
                          "--game", "../up")
    assert code == USER_ERROR_EXIT and "bad game name" in output, output
    assert not (tmp_path / "s").exists()
