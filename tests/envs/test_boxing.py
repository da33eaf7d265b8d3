"""Two-player Atari Boxing (PettingZoo's boxing_v2) as ``examples/boxing`` plays it, and a short
league on it through ``msagent train``.

Needs ``multi-agent-ale-py`` and ``ale-py`` (which ships the ROM); skipped only when they are
not installed.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("multi_agent_ale_py", reason="pip install multi-agent-ale-py==0.1.12")
pytest.importorskip("ale_py", reason="pip install 'ale-py>=0.9' (ships the Boxing ROM)")

from msagent.envs.adapters import as_multi_agent  # noqa: E402
from msagent.envs.checks import ObsChecker  # noqa: E402
from msagent.errors import ConfigError  # noqa: E402
from msagent.user_scripts import build_policy, load_script  # noqa: E402
from tests.envs.cli_runs import newest_version, random_bot_seats, train_until  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BOXING = REPO / "examples" / "boxing"
ENV_SCRIPT = BOXING / "boxing_env.py"
AGENT_SCRIPT = BOXING / "boxing_agent.py"
boxing_env = load_script(str(ENV_SCRIPT))
random_bot = load_script(str(BOXING / "bots" / "random_bot.py"))
attacker_bot = load_script(str(BOXING / "bots" / "attacker_bot.py"))
sparring_bot = load_script(str(BOXING / "bots" / "sparring_bot.py"))


def random_game(env, seed: int, limit: int = 5000):
    """One game with uniformly random actions in both seats; its turns."""
    rng = np.random.default_rng(seed)
    turns = [env.reset(seed=seed)]
    while not turns[-1].done and len(turns) < limit:
        turns.append(env.step({s: int(rng.integers(18)) for s in turns[-1].to_act}))
    return turns


def test_boxing_has_two_simultaneous_seats_with_stacked_84x84_frames() -> None:
    env = as_multi_agent(boxing_env.make_env())
    assert env.seats == ("first_0", "second_0") and env.action_space.n == 18
    assert env.observation_space.shape == (84, 84, 5) and env.observation_space.dtype == np.uint8
    turn = env.reset(seed=0)
    assert turn.to_act == (0, 1) and turn.masks is None
    for seat in (0, 1):
        assert turn.obs[seat].shape == (84, 84, 5) and turn.obs[seat].dtype == np.uint8
    # each seat sees itself as the white boxer, so the frames differ; the last plane says the seat
    assert not np.array_equal(turn.obs[0][..., :4], turn.obs[1][..., :4])
    assert (turn.obs[0][..., 4] == 0).all() and (turn.obs[1][..., 4] == 255).all()
    previous, rng, moving = turn.obs, np.random.default_rng(0), 0
    for _ in range(20):
        turn = env.step({0: int(rng.integers(18)), 1: int(rng.integers(18))})
        assert turn.to_act == (0, 1)
        for seat in (0, 1):  # the stack moved on by one frame
            np.testing.assert_array_equal(turn.obs[seat][..., :3], previous[seat][..., 1:4])
        previous = turn.obs
        moving += len({turn.obs[0][..., c].tobytes() for c in range(4)}) > 1
    assert moving > 10, "the stacked frames hardly ever differ: the boxers do not move"
    ObsChecker(env.observation_space).check_obs(np.stack([turn.obs[0], turn.obs[1]]), 20)
    env.close()


def test_without_the_seat_plane_observations_are_four_frames() -> None:
    env = boxing_env.make_env(seat_indicator=False)
    assert env.observation_space.shape == (84, 84, 4)
    turn = env.reset(seed=1)
    assert turn.obs[0].shape == (84, 84, 4) and turn.obs[0].dtype == np.uint8
    env.close()


@pytest.mark.slow
def test_a_random_game_ends_with_the_round_and_every_step_is_zero_sum() -> None:
    env = boxing_env.make_env()
    turns = random_game(env, seed=3)
    last = turns[-1]
    assert last.terminated and not last.truncated
    frames = boxing_env.ROUND_FRAMES
    assert frames // 4 - 5 <= len(turns) - 1 <= frames // 4 + 5  # 4 frames per decision
    rewards = np.array([t.rewards for t in turns])
    np.testing.assert_array_equal(rewards.sum(axis=1), 0.0)
    assert np.abs(rewards).sum() > 0, "no punch landed in a whole random round"
    env.close()


def test_approach_shaping_rewards_closing_in_and_keeps_the_games_points() -> None:
    env = boxing_env.make_env(approach=1.0)
    turn = env.reset(seed=0)
    start = boxing_env.approach_potential(env.unwrapped.env, 1.0)
    assert -1.0 <= start[0] < -0.9 and start[0] == start[1]  # the boxers start far apart
    rewards, scores = np.zeros(2), np.zeros(2)
    for _ in range(30):  # the white boxer walks right, toward the black one; neither punches
        turn = env.step({0: 3, 1: 0})
        rewards, scores = rewards + turn.rewards, scores + turn.score
    closer = boxing_env.approach_potential(env.unwrapped.env, 1.0)
    np.testing.assert_allclose(rewards, closer - start)
    assert rewards[0] > 0.2 and scores.tolist() == [0, 0]
    for _ in range(10):  # and back
        turn = env.step({0: 4, 1: 0})
    assert turn.rewards[0] < 0
    env.close()


def test_max_cycles_truncates_a_game_with_final_observations() -> None:
    env = boxing_env.make_env(max_cycles=40)
    turns = random_game(env, seed=0)
    last = turns[-1]
    assert len(turns) - 1 == 10 and last.truncated and not last.terminated
    assert set(last.final_obs) == {0, 1}
    assert all(o.shape == (84, 84, 5) and o.dtype == np.uint8 for o in last.final_obs.values())
    env.close()


def test_the_plain_pettingzoo_env_plays_the_same_game() -> None:
    """The example builds boxing_v2's inner ParallelAtariEnv; PettingZoo's documented
    ``boxing_v2.parallel_env()`` around it gives the very same frames and rewards."""
    direct = as_multi_agent(boxing_env.raw_boxing())
    plain = as_multi_agent(boxing_env.raw_boxing(direct=False))
    assert plain.seats == direct.seats and plain.label == direct.label == "boxing_v2"
    a, b = direct.reset(seed=5), plain.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(300):
        actions = {s: int(rng.integers(18)) for s in a.to_act}
        a, b = direct.step(actions), plain.step(actions)
        np.testing.assert_array_equal(a.obs[0], b.obs[0])
        np.testing.assert_array_equal(a.rewards, b.rewards)


def test_a_missing_rom_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ale_py" else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'ale-py>=0.9'"):
        boxing_env.make_env()


def test_the_agent_is_the_nature_cnn_and_acts_on_boxing_frames() -> None:
    policy = build_policy(str(ENV_SCRIPT), str(AGENT_SCRIPT), {}, 0)
    convs = [m for m in policy.model.actor.modules() if type(m).__name__ == "Conv2d"]
    assert [(c.kernel_size, c.stride) for c in convs] == [((8, 8), (4, 4)), ((4, 4), (2, 2)),
                                                          ((3, 3), (1, 1))]
    assert convs[0].in_channels == 5
    assert policy.model.actor[0] is policy.model.critic[0]  # one torso under both heads
    env = boxing_env.make_env()
    turn = env.reset(seed=0)
    out = policy.act(np.stack([turn.obs[0], turn.obs[1]]), None)
    assert out.actions.shape == (2,) and ((0 <= out.actions) & (out.actions < 18)).all()
    env.close()


def test_the_random_bot_presses_every_button() -> None:
    random_bot.seed(0)
    chosen = {random_bot.act(np.zeros((84, 84, 5), np.uint8), None) for _ in range(500)}
    assert chosen == set(range(18))


def test_the_attacker_bot_lines_a_glove_up_with_the_opponents_head() -> None:
    reach, offset = attacker_bot.REACH, attacker_bot.OFFSET
    fire_right, fire, down_right, up_left = 11, 1, 8, 7
    assert attacker_bot._action(offset, reach + 20) == 3  # level: walk right
    assert attacker_bot._action(offset, reach) == fire  # level and within reach: punch
    assert attacker_bot._action(-offset, reach + 3) == fire_right  # closing in, punching
    assert attacker_bot._action(offset + 10, reach + 20) == down_right
    assert attacker_bot._action(-offset - 10, -reach - 20) == up_left
    # head to head (glove on glove) is not lined up: it steps off to put a glove on the head
    assert attacker_bot._action(0, reach + 20) in (6, 8)


def test_the_attacker_bot_finds_itself_as_the_white_boxer() -> None:
    frame = np.full((84, 84, 5), 132, np.uint8)
    frame[20:30, 20:26, 3], frame[50:60, 60:66, 3] = 214, 0  # white at left, black lower right
    assert attacker_bot.act(frame, None) == 8  # white (itself) walks down and right
    frame[20:30, 20:26, 3], frame[50:60, 60:66, 3] = 0, 214
    assert attacker_bot.act(frame, None) == 7  # now it is the lower right one: up and left


def test_each_seat_sees_itself_as_the_white_boxer() -> None:
    """Real screens: seat 1's grayscale frame is seat 0's with the boxers' levels swapped right
    of the blanked border, every other level as it was; without ``own_colour`` they are equal."""
    raw = as_multi_agent(boxing_env.Grayscale(boxing_env.raw_boxing()))
    own = as_multi_agent(boxing_env.OwnColour(boxing_env.Grayscale(boxing_env.raw_boxing())))
    rng = np.random.default_rng(3)
    turn, seen = raw.reset(seed=3), own.reset(seed=3)
    for _ in range(60):
        actions = {0: int(rng.integers(18)), 1: int(rng.integers(18))}
        turn, seen = raw.step(actions), own.step(actions)
    screen = turn.obs[0]
    white, black = boxing_env.WHITE, boxing_env.BLACK
    ring = screen[:, boxing_env.BORDER_COLS:]
    assert (ring == white).sum() > 100 and (ring == black).sum() > 100  # both boxers on screen
    np.testing.assert_array_equal(seen.obs[0], screen)
    swapped = screen.copy()
    swapped[:, boxing_env.BORDER_COLS:][ring == white] = black
    swapped[:, boxing_env.BORDER_COLS:][ring == black] = white
    np.testing.assert_array_equal(seen.obs[1], swapped)
    assert (seen.obs[1][:, :boxing_env.BORDER_COLS] == 0).all()  # the border stays black
    plain = as_multi_agent(boxing_env.make_env(own_colour=False))
    first = plain.reset(seed=0)
    np.testing.assert_array_equal(first.obs[0][..., :4], first.obs[1][..., :4])
    for env in (raw, own, plain):
        env.close()


def test_the_sparring_bot_plays_the_attackers_move_except_in_its_random_share() -> None:
    frame = np.full((84, 84, 5), 132, np.uint8)
    frame[20:30, 20:26, 3], frame[50:60, 60:66, 3] = 214, 0
    sparring_bot.seed(0)
    moves = np.array([sparring_bot.act(frame, None) for _ in range(4000)])
    share = sparring_bot.RANDOM_SHARE
    assert 0 < share < 1
    # the attacker's move (8) every time but in the random share, where it is 1 in 18
    assert abs(np.mean(moves == 8) - (1 - share + share / 18)) < 0.03
    assert len(set(moves.tolist())) == 18  # the random share presses every button


@pytest.mark.slow
@pytest.mark.parametrize("seat", [0, 1])
def test_the_attacker_bot_outpunches_the_random_bot_from_either_seat(seat: int) -> None:
    env = as_multi_agent(boxing_env.make_env(max_pool=True, noop_max=30))
    random_bot.seed(seat)
    turn, points = env.reset(seed=seat), np.zeros(2)
    for _ in range(500):
        obs = turn.obs
        turn = env.step({seat: attacker_bot.act(obs[seat], None),
                         1 - seat: random_bot.act(obs[1 - seat], None)})
        points += turn.rewards
        if turn.done:
            break
    assert points[seat] - points[1 - seat] >= 20, points


@pytest.mark.slow
def test_a_short_boxing_league_trains_snapshots_and_evaluates(tmp_path: Path) -> None:
    """``msagent train examples/boxing_league.toml`` with short games (200 frames), asked to
    stop (``msagent stop``) once both players have snapshots after training and the random
    bot was played from both seats: both players learn, the main agent is snapshotted, games
    are played in the league and against the random bot from both seats."""
    result_json = tmp_path / "result.json"
    # one process (the game is the subject; Ray's start-up and 8 actors took 100 of 120 s)
    overrides = ["run.stop.time_s=150", 'run.mode="local"',
                 f"run.root={json.dumps(str(tmp_path / 'runs'))}",
                 "logging.progress=false", "logging.tensorboard=false", "env.max_cycles=200",
                 "services.env_worker.num_envs=4", "services.env_worker.fragment_len=8",
                 "services.learner.batch_fragments=4",
                 "services.evaluator.num_envs=2", "services.evaluator.pause_s=0.0",
                 "league.roles.main.snapshot_every_updates=3",
                 "league.roles.main_exploiter.snapshot_every_updates=3", "league.min_games=1"]
    cmd = [sys.executable, "-m", "msagent", "train", str(REPO / "examples" / "boxing_league.toml"),
           "--result-json", str(result_json)]
    for override in overrides:
        cmd += ["--set", override]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    code, stdout, stderr = train_until(cmd, tmp_path / "runs", _shown, env, REPO)
    output = stdout[-4000:] + stderr[-4000:]
    assert code == 0, output
    result = json.loads(result_json.read_text())
    players = result["league"]["players"]
    assert players["main"]["updates"] >= 3 and players["main_exploiter"]["updates"] >= 1, result
    assert result["episodes"] > 0 and result["league"]["summary"]["matches"] > 0, result
    (run_dir,) = list((tmp_path / "runs").iterdir())
    snapshots = {p.name for p in (run_dir / "snapshots").iterdir()}
    assert {"main@1.safetensors"} < {s for s in snapshots if s.startswith("main@")}, snapshots
    for seat in (0, 1):
        found = re.search(rf"main vs bot:random from seat {seat}: .* over the last (\d+) games?",
                          stdout)
        assert found and int(found[1]) >= 1, output


def _shown(feed: dict, snapshots: set[str]) -> bool:
    """Both players snapshotted after 3 updates, the random bot played from both seats."""
    trained = all(newest_version(snapshots, p) >= 4 for p in ("main", "main_exploiter"))
    return trained and random_bot_seats(feed) == {0, 1}
