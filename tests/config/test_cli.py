"""The msagent command line, through typer's CliRunner (training itself is faked)."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from msagent.cli import app
from msagent.config import TrainConfig, load_config
from msagent.rundir import RunDir
from msagent.preflight import ADDRESS_TIMEOUT_S
from tests.config.helpers import MINIMAL

runner = CliRunner()


@contextmanager
def listening_port() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections while the block runs."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


@pytest.fixture
def fake_training(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the hand-over to training with a fake that records its calls."""
    calls: list[dict[str, Any]] = []

    def run(cfg: TrainConfig, run_dir: RunDir, plan: Any) -> dict[str, Any]:
        calls.append({"cfg": cfg, "run_dir": run_dir, "resume": plan})
        return {"env_steps": 4096, "stop_reason": "fake"}

    monkeypatch.setattr("msagent.cli.run", run)
    return calls


def test_bad_config_exits_2_naming_the_key(write_config, fake_training) -> None:
    path = write_config(MINIMAL + '[services.env_worker]\nnum_envs = "many"\n')
    result = runner.invoke(app, ["train", str(path)])
    assert result.exit_code == 2
    assert "services.env_worker.num_envs" in result.output and str(path) in result.output
    assert "Traceback" not in result.output and fake_training == []


def test_bad_set_exits_2(write_config, fake_training) -> None:
    result = runner.invoke(app, ["train", str(write_config(MINIMAL)), "--set", "run.seed"])
    assert result.exit_code == 2 and "bad --set" in result.output


def test_train_creates_run_dir_and_passes_config(write_config, fake_training, tmp_path) -> None:
    path = write_config(MINIMAL)
    root = tmp_path / "out"
    with listening_port() as port:
        result = runner.invoke(app, ["train", str(path), "--set", f"run.root={str(root)!r}",
                                     "--set", "run.seed=9", "--address", f"127.0.0.1:{port}"])
    assert result.exit_code == 0, result.output
    (call,) = fake_training
    cfg, run_dir = call["cfg"], call["run_dir"]
    assert call["resume"] is None and cfg.run.seed == 9
    assert (cfg.run.mode, cfg.run.address) == ("ray", f"127.0.0.1:{port}")
    assert run_dir.path.parent == root and str(run_dir.path) in result.output
    assert load_config(run_dir.config_path) == cfg
    assert "stop_reason" in result.output


def test_resume_without_a_checkpoint_exits_2_and_keeps_the_config(write_config, fake_training,
                                                                   tmp_path) -> None:
    previous = RunDir.create(tmp_path / "runs", "old")
    previous.write_config("# the first run's config\n")
    args = ["train", str(write_config(MINIMAL)), "--mode", "local", "--resume", str(previous.path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "has no complete checkpoint" in result.output and fake_training == []
    assert previous.config_path.read_text() == "# the first run's config\n"
    assert not list(previous.path.glob("config.*.toml"))


def test_resume_of_a_non_run_dir_exits_2(write_config, fake_training, tmp_path) -> None:
    result = runner.invoke(app, ["train", str(write_config(MINIMAL)), "--resume", str(tmp_path)])
    assert result.exit_code == 2 and "not an msagent run directory" in result.output


def test_address_with_nothing_there_fails_fast_without_a_run_dir(write_config, fake_training,
                                                                 tmp_path) -> None:
    with listening_port() as port:
        pass  # the port is closed again: nothing listens there
    start = time.monotonic()
    result = runner.invoke(app, ["train", str(write_config(MINIMAL)), "--set",
                                 f"run.root={str(tmp_path / 'runs')!r}",
                                 "--address", f"127.0.0.1:{port}"])
    assert result.exit_code == 2, result.output
    assert f"no Ray cluster answers at 127.0.0.1:{port}" in result.output
    assert time.monotonic() - start < ADDRESS_TIMEOUT_S + 5
    assert not (tmp_path / "runs").exists() and fake_training == []


def test_result_json_into_a_missing_folder_fails_before_training(write_config, fake_training,
                                                                 tmp_path) -> None:
    result = runner.invoke(app, ["train", str(write_config(MINIMAL)), "--set",
                                 f"run.root={str(tmp_path / 'runs')!r}",
                                 "--result-json", str(tmp_path / "nowhere" / "r.json")])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert not (tmp_path / "runs").exists() and fake_training == []


def test_version_and_python_dash_m() -> None:
    import subprocess

    from msagent import __version__

    assert runner.invoke(app, ["version"]).output.strip() == __version__
    done = subprocess.run([sys.executable, "-m", "msagent", "version"], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0 and done.stdout.strip() == __version__


@pytest.mark.parametrize("args", [[], ["tokens"]])
def test_help_shows_each_summary_as_one_paragraph(args: list[str]) -> None:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    wanted = ("newest league checkpoint; write the payoff heatmap." if not args
              else "Create a token for a client and its games and print it")
    assert any(wanted in line for line in lines), result.output  # a docstring's line break
    # inside a summary is not a line break of the help


@pytest.mark.parametrize("checkpointed", [True, False])
def test_a_user_error_mid_run_says_how_to_resume_once_fixed(write_config, monkeypatch, tmp_path,
                                                            checkpointed: bool) -> None:
    """A user's error after a checkpoint (a PSRO solver that cannot solve the game) ends with
    the resume command; one before any checkpoint does not offer it."""
    from msagent.errors import ConfigError

    def run(cfg: TrainConfig, run_dir: RunDir, plan: Any) -> dict[str, Any]:
        if checkpointed:
            run_dir.save_checkpoint(7, {}, {"progress": {}})
        raise ConfigError("[league.psro] solver = 'nash' needs a zero-sum game")

    monkeypatch.setattr("msagent.cli.run", run)
    path = write_config(MINIMAL)
    result = runner.invoke(app, ["train", str(path), "--mode", "local",
                                 "--set", f"run.root={str(tmp_path / 'runs')!r}"])
    assert result.exit_code == 2 and "needs a zero-sum game" in result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    hint = f"continue it from its last checkpoint with:\n  msagent train {path} --resume {run_dir}"
    assert (hint in result.output) == checkpointed, result.output
