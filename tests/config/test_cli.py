"""The msagent command line, through typer's CliRunner (training itself is faked)."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from msagent.cli import app
from msagent.config import TrainConfig, load_config
from msagent.rundir import RunDir
from tests.config.helpers import MINIMAL

runner = CliRunner()


@pytest.fixture
def fake_training(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Install a fake ``msagent.train`` that records its calls."""
    calls: list[dict[str, Any]] = []

    def run_training(cfg: TrainConfig, run_dir: RunDir, resume: bool) -> dict[str, Any]:
        calls.append({"cfg": cfg, "run_dir": run_dir, "resume": resume})
        return {"env_steps": 4096, "stop_reason": "fake"}

    module = types.ModuleType("msagent.train")
    module.run_training = run_training  # type: ignore[attr-defined]
    module.check_supported = lambda cfg: None  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "msagent.train", module)
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
    result = runner.invoke(app, ["train", str(path), "--set", f"run.root={str(root)!r}",
                                 "--set", "run.seed=9", "--address", "10.0.0.1:6379"])
    assert result.exit_code == 0, result.output
    (call,) = fake_training
    cfg, run_dir = call["cfg"], call["run_dir"]
    assert call["resume"] is False and cfg.run.seed == 9
    assert (cfg.run.mode, cfg.run.address) == ("ray", "10.0.0.1:6379")
    assert run_dir.path.parent == root and str(run_dir.path) in result.output
    assert load_config(run_dir.config_path) == cfg
    assert "stop_reason" in result.output


def test_mode_flag_and_resume(write_config, fake_training, tmp_path) -> None:
    previous = RunDir.create(tmp_path / "runs", "old")
    args = ["train", str(write_config(MINIMAL)), "--mode", "local", "--resume", str(previous.path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (call,) = fake_training
    assert call["resume"] is True and call["run_dir"].path == previous.path
    assert call["cfg"].run.mode == "local"


def test_resume_of_a_non_run_dir_exits_2(write_config, fake_training, tmp_path) -> None:
    result = runner.invoke(app, ["train", str(write_config(MINIMAL)), "--resume", str(tmp_path)])
    assert result.exit_code == 2 and "not an msagent run directory" in result.output


def test_missing_training_module_is_reported(write_config, monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "msagent.train", None)  # import fails like a missing module
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["train", str(write_config(MINIMAL))])
    assert result.exit_code == 1 and "msagent.train" in result.output
    assert not (tmp_path / "runs").exists()


def test_version_and_python_dash_m() -> None:
    import subprocess

    from msagent import __version__

    assert runner.invoke(app, ["version"]).output.strip() == __version__
    done = subprocess.run([sys.executable, "-m", "msagent", "version"], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0 and done.stdout.strip() == __version__
