"""``[[league.players]] init``: a league player starts from weights trained elsewhere (a run
directory's newest checkpoint, a checkpoint file or a snapshot file), checked before anything
starts; bad paths and networks that do not fit are refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file
from typer.testing import CliRunner

from msagent.cli import CONFIG_ERROR_EXIT, app
from msagent.errors import ConfigError
from msagent.policy import PPO
from msagent.rundir import RunDir
from msagent.services.learner.state import (
    LEAGUE_REQUIRED_KEYS, LearnerCounters, policy_weights, save_learner,
)
from msagent.train import run_training
from msagent.train.initial_weights import (
    fresh_weights, initial_weights, load_weights, mismatch,
)
from msagent.user_scripts import build_policy
from tests.train.helpers import train_until
from tests.train.league_helpers import LEAGUE_EXAMPLE, league_config

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

PLAYERS = '[{id="main", role="main", init=%s}, {id="main_exploiter", role="main_exploiter"}]'


def _players(init: Path | str, player: str | None = None) -> str:
    """A ``league.players`` override whose main starts from ``init``."""
    entry = f'"{init}"' + (f', init_player="{player}"' if player else "")
    return "league.players=" + PLAYERS % entry


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short tic-tac-toe league's run directory (checkpoints and snapshots)."""
    root = tmp_path_factory.mktemp("first")
    cfg = league_config(root, "local", "run.stop.time_s=120", "services.evaluator.num=0",
                        "league.roles.main.snapshot_every_updates=3",
                        "league.roles.main_exploiter.snapshot_every_updates=1")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    # on its own inline backend, shut down at the end; stopped once BOTH players have trained
    # (a fixed time left the exploiter untrained on a loaded machine)
    snapshots = run_dir.snapshots
    train_until(cfg, run_dir, lambda: all(
        snapshots.newest(p, 1) and snapshots.newest(p, 1)[0].version > 3
        for p in ("main", "main_exploiter")), 120, "both players to train")
    return run_dir.path


def _saved(run: Path, player: str) -> dict[str, np.ndarray]:
    """``player``'s weights in the run's newest league checkpoint."""
    found = RunDir.open(run).checkpoints.latest(LEAGUE_REQUIRED_KEYS)
    return policy_weights(found.tensors, found.state, player)


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two weight sets are equal, name by name."""
    return set(a) == set(b) and all(np.array_equal(a[k], b[k]) for k in a)


def _pretrained(cfg_root: Path, seed: int) -> tuple[Path, dict[str, np.ndarray]]:
    """A one-policy run directory whose policy was built with ``seed`` (never trained)."""
    cfg = league_config(cfg_root, "local")
    sc = cfg.scripts
    ppo = PPO(build_policy(str(sc.env), str(sc.agent), dict(cfg.env), seed))
    run_dir = RunDir.create(cfg_root, "pretrain")
    save_learner(run_dir, ppo, LearnerCounters(updates=5), {}, {})
    return run_dir.path, ppo.policy.get_weights()


def test_a_run_directory_gives_its_newest_checkpoints_part_of_the_named_player(
        trained: Path) -> None:
    main, exploiter = _saved(trained, "main"), _saved(trained, "main_exploiter")
    assert not _same(main, exploiter)  # the two players trained apart
    assert _same(load_weights(trained, "main"), main)
    assert _same(load_weights(trained, "main_exploiter"), exploiter)
    newest = max((trained / "checkpoints").glob("ckpt-*.safetensors"))
    assert _same(load_weights(newest, "main_exploiter"), exploiter)
    with pytest.raises(ConfigError, match="no player 'nobody'.*main_exploiter.*init_player"):
        load_weights(trained, "nobody")


def test_a_one_policy_run_gives_its_only_policy_whatever_the_player(tmp_path: Path) -> None:
    run, weights = _pretrained(tmp_path, 3)
    assert _same(load_weights(run, "main_exploiter"), weights)
    assert not _same(load_weights(run, "main"), fresh_weights(league_config(tmp_path, "local")))


def test_a_snapshot_file_gives_its_weights(trained: Path) -> None:
    files = RunDir.open(trained).snapshots
    key = files.newest("main", 1)[0]
    assert _same(load_weights(files.path(key), "ignored"), files.load(key))


def test_bad_paths_are_refused_by_name(trained: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_weights(tmp_path / "missing", "main")
    with pytest.raises(ConfigError, match="not an msagent run directory"):
        load_weights(tmp_path, "main")
    text = tmp_path / "weights.txt"
    text.write_text("not weights")
    with pytest.raises(ConfigError, match="not a run directory, a checkpoint or a snapshot"):
        load_weights(text, "main")
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(b"\x00" * 5)
    with pytest.raises(ConfigError, match="unreadable weights"):
        load_weights(broken, "main")


def test_weights_that_do_not_fit_the_network_are_refused_naming_the_parameter() -> None:
    now = {"a": np.zeros((2, 3)), "b": np.zeros(3)}
    assert mismatch({"a": np.ones((2, 3)), "b": np.ones(3)}, now) is None
    assert "'a' has shape (3, 2)" in mismatch({"a": np.zeros((3, 2)), "b": now["b"]}, now)
    assert "'b' is in the policy built now only" in mismatch({"a": now["a"]}, now)
    assert "'c' is in the saved weights only" in mismatch({**now, "c": np.zeros(1)}, now)


def test_the_config_resolves_init_and_checks_it_against_the_scripts(trained: Path,
                                                                   tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", _players("relative/run"))
    assert Path(cfg.league.players[0].init) == Path.cwd() / "relative" / "run"
    assert cfg.league.players[1].init is None
    cfg = league_config(tmp_path, "local", _players(trained, "main_exploiter"))
    found = initial_weights(cfg)
    assert list(found) == ["main"] and _same(found["main"], _saved(trained, "main_exploiter"))
    weights = _saved(trained, "main")
    name = sorted(weights)[0]
    bent = tmp_path / "bent.safetensors"
    save_file({**weights, name: np.zeros((7, 7), weights[name].dtype)}, str(bent))
    with pytest.raises(ConfigError, match=f"'main': init .*bent.*{name}.*has shape .7, 7."):
        initial_weights(league_config(tmp_path, "local", _players(bent)))


def test_init_under_psro_is_refused_rather_than_ignored(trained: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"init is not used under \[league.psro\]"):
        league_config(tmp_path, "local", _players(trained), "league.psro.iterations=2")


def test_a_league_player_starts_from_the_weights_it_names(inline_only: str,
                                                          tmp_path: Path) -> None:
    # The init is a seed-3 network, so it differs from a fresh one (seed 0) whatever a short
    # training run happened to do: the test cannot pass or fail on the machine's speed.
    init, init_weights = _pretrained(tmp_path, 3)
    cfg = league_config(tmp_path, "local", "run.stop.time_s=4", "services.evaluator.num=0",
                        _players(init))
    fresh = fresh_weights(cfg)
    assert not _same(init_weights, fresh)
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_training(cfg, run_dir)
    files = run_dir.snapshots
    first_main = files.load(files.newest("main", 10 ** 6)[0])
    first_exploiter = files.load(files.newest("main_exploiter", 10 ** 6)[0])
    assert _same(first_main, init_weights)  # main's first snapshot: the init
    assert _same(first_exploiter, fresh)  # the exploiter: a fresh network


def test_msagent_train_refuses_a_bad_init_before_making_a_run_directory(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    args = ["train", str(LEAGUE_EXAMPLE), "--mode", "local",
            "--set", f"run.root={json.dumps(str(root))}", "--set", "logging.progress=false",
            "--set", _players(tmp_path / "nowhere")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == CONFIG_ERROR_EXIT, result.output
    assert "nowhere: it does not exist" in result.output and "Traceback" not in result.output
    assert not root.exists() or not any(root.iterdir())  # nothing written
