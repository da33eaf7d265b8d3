"""Out-of-range [algorithm] values are refused at their own key, all at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from msagent.cli import CONFIG_ERROR_EXIT, app
from msagent.config import load_config
from msagent.errors import ConfigError
from tests.config.helpers import MINIMAL

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_ppo.toml"


def test_a_negative_learning_rate_names_the_key(write_config) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(MINIMAL + "[algorithm]\nlr = -1\n"))
    assert str(info.value).splitlines()[1] == "  algorithm.lr: lr must be > 0, got -1.0"


def test_every_bad_range_is_listed_with_its_origin(write_config) -> None:
    config = write_config(MINIMAL + "[algorithm]\ngamma = 0\nmax_grad_norm = 0\n")
    with pytest.raises(ConfigError) as info:
        load_config(config, ["algorithm.epochs=0"])
    assert sorted(str(info.value).splitlines()[1:]) == [
        "  algorithm.epochs (from --set): epochs must be >= 1, got 0",
        "  algorithm.gamma: gamma must be in (0, 1], got 0.0",
        "  algorithm.max_grad_norm: max_grad_norm must be > 0, got 0.0",
    ]


def test_none_and_edge_values_are_accepted(write_config) -> None:
    text = MINIMAL + '[algorithm]\nmax_grad_norm = "none"\nent_coef = 0\ngamma = 1\n'
    ppo = load_config(write_config(text)).ppo_config()
    assert ppo.max_grad_norm is None and ppo.ent_coef == 0.0 and ppo.gamma == 1.0


def test_cli_exits_with_2_before_making_a_run_directory(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    result = CliRunner().invoke(app, [
        "train", str(EXAMPLE), "--mode", "local", "--set", "algorithm.lr=-1",
        "--set", f"run.root={json.dumps(str(root))}"])
    assert result.exit_code == CONFIG_ERROR_EXIT, result.output
    assert "algorithm.lr (from --set): lr must be > 0, got -1.0" in result.output
    assert not root.exists()


def test_a_batch_size_is_refused_in_sync_mode(write_config) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(write_config(MINIMAL), ["services.learner.batch_fragments=8"])
    assert "batch_fragments = 8 needs sync = false" in str(info.value)
    with pytest.raises(ConfigError, match="queued_batches = 2 needs sync = false"):
        load_config(write_config(MINIMAL), ["services.learner.queued_batches=2"])


def test_a_leagues_learners_take_a_batch_size_without_saying_sync_false(write_config) -> None:
    """A league's learners are async by default; the sync check waited for no such default and
    refused the batch size."""
    league = MINIMAL + '\n[[league.players]]\nid = "main"\nrole = "main"\n'
    cfg = load_config(write_config(league), ["services.learner.batch_fragments=48"])
    assert not cfg.services.learner.sync and cfg.services.learner.batch_fragments == 48


def test_the_built_in_random_bot_is_no_script_path(write_config) -> None:
    league = MINIMAL + ('\n[[league.players]]\nid = "main"\nrole = "main"\n'
                        '[league.bots]\nrandom = "msagent:random"\n')
    assert load_config(write_config(league)).league.bots == {"random": "msagent:random"}
    with pytest.raises(ConfigError, match="script file not found"):
        load_config(write_config(league.replace("msagent:random", "msagent_random.py")))
