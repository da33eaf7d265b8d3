"""``msagent evaluate`` and ``msagent league`` on a real (short) tic-tac-toe league run."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from msagent.cli import USER_ERROR_EXIT, app
from msagent.evaluate import evaluate_run
from msagent.rundir import RunDir
from tests.envs.cli_runs import newest_version, train_until

pytestmark = pytest.mark.slow  # runs training (or a site build): not in the fast tier

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
TICTACTOE = REPO / "examples" / "tictactoe"
RANDOM_BOT = TICTACTOE / "bots" / "random_bot.py"
PLAYERS = ("main", "main_exploiter", "league_exploiter")
GAMES = 6


def league_toml(root: Path) -> str:
    """examples/connect4_league.toml's shape on tic-tac-toe, small and fast, no evaluator."""
    players = "".join(f'\n[[league.players]]\nid = "{p}"\nrole = "{p}"\n' for p in PLAYERS)
    return f"""
[run]
name = "ttt_league"
seed = 0
root = {json.dumps(str(root))}

[run.stop]
time_s = 120

[scripts]
env = {json.dumps(str(TICTACTOE / "tictactoe_env.py"))}
agent = {json.dumps(str(TICTACTOE / "tictactoe_agent.py"))}

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

[league]
payoff_decay = 0.99
min_games = 10
{players}
[league.roles.main]
snapshot_every_updates = 5

[league.roles.main_exploiter]
snapshot_every_updates = 5

[league.roles.league_exploiter]
snapshot_every_updates = 5

[league.bots]
random = {json.dumps(str(RANDOM_BOT))}
lookahead = {json.dumps(str(TICTACTOE / "bots" / "lookahead_bot.py"))}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One short league run (trained once for the module) in local mode."""
    return train_league(tmp_path_factory.mktemp("league_cli"))


@pytest.fixture(scope="module")
def redis_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A short league run whose model pool is on a redis-server of its own (skipped without
    one installed); the server is stopped after the module."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    redis = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "redis-server did not start"
                time.sleep(0.1)
        yield train_league(tmp_path_factory.mktemp("league_cli_redis"),
                           f'[services.model_pool]\nurl = "redis://127.0.0.1:{port}/0"\n')
    finally:
        redis.terminate()
        redis.wait(10)


def train_league(base: Path, extra: str = "") -> Path:
    """Train :func:`league_toml` (plus ``extra`` TOML) under ``base``; its run directory."""
    config = base / "ttt_league.toml"
    config.write_text(league_toml(base / "runs") + "\n" + extra)
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    # stopped once main has three snapshots (what the tests read), not after a fixed time
    # that a loaded machine could spend with fewer
    cmd = [sys.executable, "-m", "msagent", "train", str(config), "--mode", "local"]
    code, stdout, stderr = train_until(
        cmd, base / "runs", lambda feed, snaps: newest_version(snaps, "main") >= 11, env, REPO)
    assert code == 0, stdout[-3000:] + stderr[-3000:]
    (found,) = list((base / "runs").iterdir())
    assert RunDir(found).checkpoint_steps(), "the run wrote no checkpoint"
    return found


def evaluate(run: Path, *args: str) -> tuple[int, str]:
    """``msagent evaluate RUN ARGS``: (exit code, output)."""
    result = runner.invoke(app, ["evaluate", str(run), *args])
    return result.exit_code, result.output


def table_rows(output: str) -> dict[str, list[str]]:
    """The table's data rows by seat (``all`` for the overall one): their cells."""
    rows = {}
    for line in output.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line)[1:-1]]
        if len(cells) >= 6 and cells[2].isdigit():
            rows[cells[1]] = cells
    return rows


def check_table(output: str, opponent: str, games: int) -> None:
    """Both seats and the overall row, the games adding up, rates that sum to one."""
    rows = table_rows(output)
    assert set(rows) == {"all", "player_1", "player_2"}, output
    assert all(row[0] == opponent for row in rows.values()), output
    assert int(rows["all"][2]) == games, output
    assert int(rows["player_1"][2]) + int(rows["player_2"][2]) == games, output
    for row in rows.values():
        assert sum(float(x) for x in row[3:6]) == pytest.approx(1.0, abs=0.002), output
        assert re.fullmatch(r"\[\d\.\d{3}, \d\.\d{3}\]", row[6]), output


def test_evaluate_against_a_bot_script(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--opponent", str(RANDOM_BOT), "--games", str(GAMES))
    assert code == 0, output
    check_table(output, str(RANDOM_BOT), GAMES)


def test_evaluate_against_a_declared_bot_by_name(run_dir: Path) -> None:
    for name in ("bot:random", "random"):
        code, output = evaluate(run_dir, "--opponent", name, "--games", str(GAMES), "--sample")
        assert code == 0, output
        check_table(output, "bot:random", GAMES)
        assert "sampled" in output


def test_evaluate_against_another_player(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--player", "league_exploiter", "--opponent",
                            "main_exploiter", "--games", str(GAMES), "--seed", "3")
    assert code == 0, output
    check_table(output, "main_exploiter", GAMES)
    assert "league_exploiter vs main_exploiter" in output


def test_evaluate_run_counts_every_game_once_per_seat(run_dir: Path) -> None:
    found = evaluate_run(run_dir, "main", opponent="bot:random", games=5, seed=1)
    assert found.result.games == 5 and found.seats == ("player_1", "player_2")
    assert [s.games for s in found.result.by_seat] == [3, 2]
    again = evaluate_run(run_dir, "main", opponent="bot:random", games=5, seed=1)
    assert again.result == found.result  # deterministic policy, seeded bot: the same games
    low, high = found.result.win_interval
    assert 0.0 <= low <= found.result.win_rate <= high <= 1.0


def test_unknown_player_names_the_players(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--player", "nobody", "--opponent", "random", "--games", "2")
    assert code == USER_ERROR_EXIT, output
    assert "nobody" in output and all(p in output for p in PLAYERS)
    assert "Traceback" not in output


def test_unknown_opponent_lists_what_can_be_used(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--opponent", "bot:nobody", "--games", "2")
    assert code == USER_ERROR_EXIT, output
    assert "bot:random" in output and "bot:lookahead" in output and "main_exploiter" in output


def test_a_model_key_needs_a_redis_model_pool(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--opponent", "main:1", "--games", "2")
    assert code == USER_ERROR_EXIT, output
    assert "main:1" in output and "services.model_pool.url" in output and "Redis" in output
    assert "Traceback" not in output


def test_a_model_key_is_found_in_a_redis_model_pool(redis_run_dir: Path) -> None:
    state = RunDir(redis_run_dir).latest_checkpoint().state
    first = state["league"]["historical"][0]["ref"]  # e.g. main:1
    code, output = evaluate(redis_run_dir, "--opponent", first, "--games", str(GAMES))
    assert code == 0, output
    check_table(output, first, GAMES)
    code, output = evaluate(redis_run_dir, "--opponent", "main:99999", "--games", "2")
    assert code == USER_ERROR_EXIT, output
    assert "main:99999 is not in the run's model pool" in output and first in output


def test_too_few_games_is_refused(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--opponent", "random", "--games", "0")
    assert code == USER_ERROR_EXIT and "at least 1" in output, output


def test_a_missing_run_dir_is_refused(tmp_path: Path) -> None:
    code, output = evaluate(tmp_path / "absent", "--opponent", "random", "--games", "2")
    assert code == USER_ERROR_EXIT and "does not exist" in output, output


def test_league_prints_ladder_and_lineage_and_writes_the_heatmap(run_dir: Path,
                                                                  tmp_path: Path) -> None:
    heatmap = tmp_path / "out" / "heat.png"
    result = runner.invoke(app, ["league", str(run_dir), "--heatmap", str(heatmap)])
    assert result.exit_code == 0, result.output
    assert "League ladder (Elo)" in result.output and "lineage:" in result.output
    for player in PLAYERS:
        assert player in result.output
    assert str(heatmap) in result.output
    assert heatmap.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_league_writes_the_heatmap_into_the_run_dir_by_default(run_dir: Path) -> None:
    default = run_dir / "payoff_heatmap.png"
    default.unlink(missing_ok=True)
    result = runner.invoke(app, ["league", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert default.stat().st_size > 0


def test_league_without_a_league_checkpoint_is_refused(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "single")
    result = runner.invoke(app, ["league", str(run.path)])
    assert result.exit_code == USER_ERROR_EXIT, result.output
    assert "no league checkpoint" in result.output and "Traceback" not in result.output
    run.save_checkpoint(1, {"policy/w": np.zeros(2, np.float32)},
                        {"skeleton": {}, "counters": {}})  # a one-policy checkpoint
    result = runner.invoke(app, ["league", str(run.path)])
    assert result.exit_code == USER_ERROR_EXIT, result.output
    assert "no league checkpoint" in result.output and "learners" in result.output
    run.write_config('[run]\nname = "single"\n')  # as `msagent train` saves it: no [league]
    result = runner.invoke(app, ["league", str(run.path)])
    assert result.exit_code == USER_ERROR_EXIT, result.output
    assert "is a single-policy run (its config.toml has no [league] table)" in result.output


def test_evaluate_the_mean_of_the_newest_snapshots(run_dir: Path) -> None:
    keys = RunDir(run_dir).snapshots.newest("main", 3)
    assert len(keys) == 3 and keys[0].version < keys[-1].version
    code, output = evaluate(run_dir, "--opponent", "random", "--games", str(GAMES),
                            "--average", "3")
    assert code == 0, output
    check_table(output, "bot:random", GAMES)
    assert f"mean of {keys[0]}..{keys[-1]}, 3 snapshots" in output
    found = evaluate_run(run_dir, "main", opponent="bot:random", games=4, average=1)
    assert found.player == "main"  # average 1: the checkpoint's own weights


def test_the_final_evaluation_plays_and_judges_the_mean_of_the_newest_snapshots(
        run_dir: Path) -> None:
    from msagent.config import load_config
    from msagent.evaluate import saved_policy
    from msagent.train.final_evaluation import final_evaluation

    judge = str(TICTACTOE / "bots" / "perfect_bot.py")
    cfg = load_config(run_dir / "config.toml", [
        "services.evaluator.final_games=4", "services.evaluator.final_average=3",
        f"services.evaluator.judge={judge}"])
    keys = RunDir(run_dir).snapshots.newest("main", 3)
    final = final_evaluation(cfg, RunDir(run_dir), {"league": {}})
    assert final["played"].startswith(f"main (mean of {keys[0]}..{keys[-1]}, 3 snapshots) "
                                       "(checkpoint "), final["played"]
    assert [(r["opponent"], r["seat"], r["games"]) for r in final["games"]] == [
        ("bot:random", 0, 2), ("bot:random", 1, 2), ("bot:lookahead", 0, 2),
        ("bot:lookahead", 1, 2)]
    # the judge examined the same mean, not the saved weights
    from msagent.envs.judge import examine, load_exams

    exams = load_exams(judge)
    assert final["judged"]["seats"] == examine(saved_policy(run_dir, "main", 3)[0], exams)


def test_evaluate_average_refuses_zero_and_a_player_without_snapshots(run_dir: Path) -> None:
    code, output = evaluate(run_dir, "--opponent", "random", "--games", "2", "--average", "0")
    assert code == USER_ERROR_EXIT and "--average must be at least 1, got 0" in output, output
    empty = run_dir.parent / "no_snapshots"
    shutil.copytree(run_dir, empty, ignore=shutil.ignore_patterns("snapshots"))
    code, output = evaluate(empty, "--opponent", "random", "--games", "2", "--average", "2")
    assert code == USER_ERROR_EXIT and "holds no snapshot of 'main'" in output, output
    assert "Traceback" not in output
