"""Google Research Football through ``FootballEnv``: real gfootball in its child process.

Skipped when the football virtual environment is missing (``bash scripts/setup_football.sh``
builds it); the wire codec is tested either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.games.football import FootballDiedError, FootballEnv
from msagent.envs.games.football.child import DEFAULT_PYTHON, PYTHON_ENV_VAR
from msagent.envs.games.football.wire import pack, unpack
from msagent.envs.teams import teams_of
from msagent.errors import ConfigError, IllegalActionError
from tests.envs.cli_runs import train_until

REPO = Path(__file__).resolve().parents[2]
FOOTBALL_PYTHON = Path(os.environ.get(PYTHON_ENV_VAR) or DEFAULT_PYTHON)


def _have_football() -> bool:
    """Whether the football Python exists and finds gfootball."""
    if not FOOTBALL_PYTHON.is_file():
        return False
    probe = [str(FOOTBALL_PYTHON), "-c", "import importlib.util as u, sys; "
             "sys.exit(u.find_spec('gfootball') is None)"]
    return subprocess.run(probe, capture_output=True, timeout=60).returncode == 0


HAVE_FOOTBALL = _have_football()
needs_football = pytest.mark.skipif(
    not HAVE_FOOTBALL, reason=f"no gfootball for {FOOTBALL_PYTHON} (${PYTHON_ENV_VAR} or the "
                              f"default); run `bash scripts/setup_football.sh`")
RIGHT, SHOT = 5, 12
BALL_X = 88  # simple115v2: 88 floats of player positions and directions, then the ball


def run_episode(env: FootballEnv, policy, seed: int | None = None, limit: int = 1000):
    """Play one episode with ``policy(step) -> action``; (rewards summed, steps, last turn)."""
    turn = env.reset(seed=seed)
    total, steps = np.zeros(len(env.seats)), 0
    while not turn.done and steps < limit:
        turn = env.step({seat: policy(steps) for seat in turn.to_act})
        total += turn.rewards
        steps += 1
    return total, steps, turn


def test_wire_round_trips_arrays_and_refuses_object_arrays() -> None:
    message = {"obs": np.arange(24, dtype=np.float32).reshape(2, 3, 4),
               "frame": np.full((3, 2), 255, np.uint8), "done": True, "n": np.int64(7)}
    back = unpack(pack(message)[4:])
    assert back["obs"].dtype == np.float32 and back["obs"].shape == (2, 3, 4)
    assert back["obs"].flags.writeable
    np.testing.assert_array_equal(back["obs"], message["obs"])
    np.testing.assert_array_equal(back["frame"], message["frame"])
    assert back["done"] is True and back["n"] == 7
    with pytest.raises(TypeError):
        pack({"x": object()})


@needs_football
def test_spaces_seats_and_first_observations() -> None:
    env = FootballEnv("academy_empty_goal_close")
    try:
        assert as_multi_agent(env) is env
        assert env.seats == ("left_0",) and env.teams == (0,)
        assert env.action_space.n == 19 and env.observation_space.shape == (115,)
        turn = env.reset(seed=1)
        assert turn.to_act == (0,) and turn.masks is None
        assert turn.obs[0].shape == (115,) and turn.obs[0].dtype == np.float32
        assert env.observation_space.contains(turn.obs[0])
        with pytest.raises(IllegalActionError):
            env.step({0: 19})
    finally:
        env.close()
    smm = FootballEnv("academy_empty_goal_close", representation="extracted")
    try:
        obs = smm.reset().obs[0]
        assert obs.shape == (72, 96, 4) and obs.dtype == np.uint8 and obs.max() == 255
    finally:
        smm.close()


@needs_football
def test_an_academy_episode_of_shots_ends() -> None:
    env = FootballEnv("academy_empty_goal_close")
    try:
        total, steps, turn = run_episode(env, lambda step: SHOT, seed=3)
        assert turn.done and turn.to_act == () and 0 < steps <= 400
        assert total[0] in (0.0, 1.0)
        assert turn.terminated != turn.truncated
    finally:
        env.close()


@needs_football
def test_running_right_then_shooting_scores_in_the_empty_goal() -> None:
    env = FootballEnv("academy_empty_goal_close")
    try:
        for seed in (0, 1, 2):
            total, steps, turn = run_episode(env, lambda step: RIGHT if step < 8 else SHOT, seed)
            assert total[0] == 1.0 and turn.terminated and not turn.truncated, (seed, steps)
    finally:
        env.close()


@needs_football
def test_a_full_match_ends_truncated_with_the_final_observation() -> None:
    env = FootballEnv("5_vs_5", left_players=1)
    try:
        total, steps, turn = run_episode(env, lambda step: 0, seed=0, limit=5000)
        assert steps >= 3000 and turn.truncated and not turn.terminated  # game_duration 3000
        assert turn.final_obs[0].shape == (115,) and turn.obs == {}
    finally:
        env.close()


@needs_football
def test_two_seats_play_each_other_from_their_own_side() -> None:
    env = FootballEnv("5_vs_5", left_players=1, right_players=1)
    try:
        assert env.seats == ("left_0", "right_0") and env.teams == (0, 1)
        rng = np.random.default_rng(0)
        turn = env.reset(seed=0)
        for _ in range(60):
            assert turn.to_act == (0, 1) and not turn.done
            # each seat sees the pitch from its own side: the ball's x is mirrored
            assert turn.obs[0][BALL_X] == pytest.approx(-turn.obs[1][BALL_X], abs=1e-5)
            turn = env.step({0: int(rng.integers(19)), 1: int(rng.integers(19))})
            assert turn.rewards.shape == (2,) and turn.rewards.sum() == 0.0
    finally:
        env.close()


@needs_football
@pytest.mark.parametrize("left, right, seats, teams", [
    (2, 0, ("left_0", "left_1"), (0, 0)), (0, 1, ("right_0",), (0,))])
def test_teams_of_several_players_or_the_right_side_alone(left, right, seats, teams) -> None:
    env = FootballEnv("5_vs_5", left_players=left, right_players=right)
    try:
        assert env.seats == seats and teams_of(env) == teams
        turn = env.reset(seed=0)
        assert turn.to_act == tuple(range(len(seats)))
        turn = env.step({seat: RIGHT for seat in turn.to_act})
        assert turn.rewards.shape == (len(seats),)
        assert all(turn.obs[seat].shape == (115,) for seat in turn.to_act)
    finally:
        env.close()


@needs_football
def test_a_killed_child_is_named_and_replaced_on_reset() -> None:
    env = FootballEnv("academy_empty_goal_close")
    try:
        env.reset(seed=0)
        first = env.pid
        os.kill(first, 9)
        with pytest.raises(FootballDiedError, match=r"exit code -9"):
            env.step({0: RIGHT})
        turn = env.reset(seed=0)
        assert env.pid != first and env.restarts == 1
        assert env.step({0: RIGHT}).rewards.shape == (1,) and turn.obs[0].shape == (115,)
    finally:
        env.close()


@needs_football
def test_close_kills_the_child() -> None:
    env = FootballEnv("academy_empty_goal_close")
    pid = env.pid
    env.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert env.pid is None


@needs_football
def test_an_unknown_scenario_is_named_with_valid_ones() -> None:
    with pytest.raises(ConfigError, match=r"'academy_no_such_drill'.*academy_empty_goal_close"):
        FootballEnv("academy_no_such_drill")


def test_a_wrong_football_python_says_how_to_set_it_up(monkeypatch, tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"setup_football\.sh"):
        FootballEnv(python=tmp_path / "no-python")
    monkeypatch.setenv(PYTHON_ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=PYTHON_ENV_VAR):
        FootballEnv()


@needs_football
@pytest.mark.slow
def test_msagent_train_learns_from_the_academy_example(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    started = time.monotonic()
    # one process: the game and its bridge are the subject (Ray's start is tested elsewhere)
    cmd = [sys.executable, "-m", "msagent", "train", str(REPO / "examples/football_academy.toml"),
           "--mode", "local", "--set", "run.stop.time_s=150",
           "--set", f"run.root={json.dumps(str(tmp_path / 'runs'))}",
           "--set", "logging.progress=false", "--set", "logging.tensorboard=false",
           "--result-json", str(out)]
    code, stdout, stderr = train_until(cmd, tmp_path / "runs", _learned, env, REPO)
    assert code == 0, stdout[-3000:] + stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["updates"] > 0 and result["episodes"] > 0, result
    assert result["env_steps"] > 2000, result
    assert time.monotonic() - started < 300


def _learned(feed: dict, snapshots: set[str]) -> bool:
    """An update made, an episode finished, 2,000 steps played: what the test checks."""
    progress = feed.get("progress", {})
    return (progress.get("updates", 0) > 0 and progress.get("episodes", 0) > 0
            and progress.get("env_steps", 0) > 2000)


@needs_football
def test_builtin_ai_action_plays_the_seat_and_is_refused_without_the_option() -> None:
    env = FootballEnv("academy_empty_goal_close", builtin_ai=True)
    try:
        # gfootball's built-in AI, handed the player, scores into the empty goal
        total, steps, turn = run_episode(env, lambda step: 19, seed=0, limit=400)
        assert turn.terminated and total[0] == 1.0, (total, steps)
    finally:
        env.close()
    plain = FootballEnv("academy_empty_goal_close")
    try:
        plain.reset(seed=0)
        with pytest.raises(IllegalActionError, match="19"):
            plain.step({0: 19})
    finally:
        plain.close()
