"""``msagent train`` refuses what this version cannot run, naming the key (exit code 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from msagent.cli import CONFIG_ERROR_EXIT, app
from msagent.runtime import state
from tests.train.helpers import EXAMPLE

runner = CliRunner()
SCRIPTS = EXAMPLE.parent / "cartpole"


def train(config: Path, root: Path, *sets: str) -> tuple[int, str]:
    """Run ``msagent train CONFIG --mode local`` with ``--set`` overrides; (exit code, output)."""
    args = ["train", str(config), "--mode", "local", "--set", f"run.root={json.dumps(str(root))}",
            "--set", "logging.progress=false", "--set", "logging.tensorboard=false"]
    for item in sets:
        args += ["--set", item]
    result = runner.invoke(app, args)
    return result.exit_code, result.output


@pytest.mark.parametrize("key", ["services.learner.num", "services.buffer.num"])
def test_a_second_learner_or_buffer_is_refused_naming_the_key(tmp_path: Path, key: str) -> None:
    code, output = train(EXAMPLE, tmp_path, f"{key}=2")
    assert code == CONFIG_ERROR_EXIT, output
    assert f"{key} = 2" in output and "Traceback" not in output
    assert state.installed() is None  # the backend it had started is shut down again


def test_an_unknown_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "typo.toml"
    config.write_text(f"[scripts]\nenv = {json.dumps(str(SCRIPTS / 'cartpole_env.py'))}\n"
                      f"agent = {json.dumps(str(SCRIPTS / 'cartpole_agent.py'))}\n\n"
                      "[services.learner]\nsinc = true\n")
    code, output = train(config, tmp_path)
    assert code == CONFIG_ERROR_EXIT, output
    assert "services.learner.sinc" in output and str(config) in output
    assert "did you mean 'sync'" in output
    assert not any(tmp_path.glob("run-*"))  # refused before any run directory was made
