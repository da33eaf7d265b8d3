"""FightingICE: the env against the protocol-level fake server (no Java), its restarts and
errors; against the real game when ``FIGHTINGICE_HOME`` names a built copy (else skipped)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip("pyftg")

from msagent.envs.adapters import as_multi_agent  # noqa: E402
from msagent.envs.games.fightingice import ACTIONS, FightingICEEnv  # noqa: E402
from msagent.envs.games.fightingice.actions import key_frames, legal_mask  # noqa: E402
from msagent.envs.multi_agent import Turn  # noqa: E402
from msagent.errors import ConfigError, IllegalActionError  # noqa: E402

HOME = os.environ.get("FIGHTINGICE_HOME")


@pytest.fixture
def fake() -> Iterator[FightingICEEnv]:
    """An env on the fake server: 300-frame rounds, 400 HP."""
    env = FightingICEEnv(fake=True, round_frames=300)
    yield env
    env.close()


def play_random(env: FightingICEEnv, turn: Turn, seed: int = 0) -> tuple[Turn, np.ndarray]:
    """Random legal actions to the game's end: the last turn and both seats' returns."""
    rng = np.random.default_rng(seed)
    returns = np.array(turn.rewards, dtype=np.float64)
    while not turn.done:
        turn = env.step({s: int(rng.choice(np.flatnonzero(turn.masks[s]))) for s in turn.to_act})
        returns += turn.rewards
    return turn, returns


@pytest.mark.slow
def test_spaces_and_the_first_turn(fake: FightingICEEnv) -> None:
    assert as_multi_agent(fake) is fake
    assert fake.seats == ("P1", "P2") and fake.action_space.n == len(ACTIONS) == 42
    turn = fake.reset()
    assert turn.to_act == (0, 1)
    for seat in (0, 1):
        assert fake.observation_space.contains(turn.obs[seat])
        assert turn.masks[seat].tolist() == legal_mask(False).tolist()
    # P2's view is mirrored: both seats see themselves at the same place, full HP
    np.testing.assert_allclose(turn.obs[0], turn.obs[1], atol=1e-6)
    assert turn.obs[0][0] == 1.0


@pytest.mark.slow
def test_a_round_ends_with_zero_sum_rewards_that_sum_to_the_hp_difference(
        fake: FightingICEEnv) -> None:
    for game in range(2):
        turn, returns = play_random(fake, fake.reset(), seed=game)
        assert turn.terminated and not turn.truncated and turn.to_act == ()
        assert returns[0] == pytest.approx(-returns[1])
        p1, p2 = fake.round_results[-1]
        assert returns[0] == pytest.approx((p1 - p2) / 400)
    assert len(fake.round_results) == 2


@pytest.mark.slow
def test_the_outcome_follows_the_hp_left(fake: FightingICEEnv) -> None:
    """P1 walks in and kicks, P2 stands still: P1 ends with more HP and the positive return."""
    walk, kick = ACTIONS.index("FORWARD_WALK"), ACTIONS.index("STAND_B")
    turn, total = fake.reset(), np.zeros(2)
    while not turn.done:
        actions = {}
        if 0 in turn.to_act:
            close = fake._frame.character_data[1].x - fake._frame.character_data[0].x < 90
            actions[0] = kick if close else walk
        if 1 in turn.to_act:
            actions[1] = 0
        turn = fake.step(actions)
        total += turn.rewards
    p1, p2 = fake.round_results[-1]
    assert p1 == 400 and p2 < 400
    assert total[0] > 0 > total[1]


@pytest.mark.slow
def test_an_illegal_action_is_refused(fake: FightingICEEnv) -> None:
    fake.reset()
    with pytest.raises(IllegalActionError, match="AIR|legal"):
        fake.step({0: ACTIONS.index("AIR_A"), 1: 0})


def test_keys_mirror_when_facing_left() -> None:
    fireball = ACTIONS.index("STAND_D_DF_FA")
    assert key_frames(fireball, True) == [frozenset("D"), frozenset("DR"), frozenset("RA")]
    assert key_frames(fireball, False) == [frozenset("D"), frozenset("DL"), frozenset("LA")]
    assert not legal_mask(True)[ACTIONS.index("STAND_A")] and legal_mask(True)[0]


@pytest.mark.slow
def test_a_killed_server_truncates_the_game_and_is_restarted(fake: FightingICEEnv) -> None:
    turn = fake.reset()
    turn = fake.step({s: 0 for s in turn.to_act})
    fake.process.kill()
    turn = fake.step({s: 0 for s in turn.to_act})
    assert turn.truncated and not turn.terminated and set(turn.final_obs) == {0, 1}
    turn, returns = play_random(fake, fake.reset())
    assert turn.terminated and fake.restarts == 1 and fake.process.alive()
    assert fake.process.starts == 2
    assert returns[0] == pytest.approx(-returns[1])


@pytest.mark.slow
def test_a_game_left_midway_is_abandoned_and_the_next_one_starts(fake: FightingICEEnv) -> None:
    turn = fake.reset()
    for _ in range(5):
        turn = fake.step({s: 0 for s in turn.to_act})
    turn, _ = play_random(fake, fake.reset())
    assert turn.terminated and fake.restarts == 0


def test_home_unset_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FIGHTINGICE_HOME", raising=False)
    with pytest.raises(ConfigError, match="FIGHTINGICE_HOME is not set"):
        FightingICEEnv()


def test_an_unbuilt_home_is_refused_with_the_build_command(tmp_path) -> None:
    with pytest.raises(ConfigError, match="javac"):
        FightingICEEnv(str(tmp_path))
    with pytest.raises(ConfigError, match="not a directory"):
        FightingICEEnv(str(tmp_path / "absent"))


def test_a_home_without_character_data_is_refused(tmp_path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "Main.class").write_bytes(b"")
    with pytest.raises(ConfigError, match="data/characters/ZEN/Motion.csv"):
        FightingICEEnv(str(tmp_path))


def test_missing_java_is_refused(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "Main.class").write_bytes(b"")
    for name in ("Motion.csv", "gSetting.txt"):
        target = tmp_path / "data" / "characters" / "ZEN" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ConfigError, match="java is not installed"):
        FightingICEEnv(str(tmp_path))


def test_a_busy_port_is_refused() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        env = FightingICEEnv(fake=True, port=busy.getsockname()[1])
        with pytest.raises(ConfigError, match="busy"):
            env.reset()
        env.close()


@pytest.mark.skipif(not HOME, reason="FIGHTINGICE_HOME is not set (no built DareFightingICE)")
def test_the_real_game_plays_rounds_back_to_back_and_survives_a_killed_jvm() -> None:
    env = FightingICEEnv(HOME, round_frames=300)
    try:
        for game in range(2):
            turn, returns = play_random(env, env.reset(), seed=game)
            assert turn.terminated and returns[0] == pytest.approx(-returns[1])
            p1, p2 = env.round_results[-1]
            assert returns[0] == pytest.approx((p1 - p2) / 400)
        turn = env.reset()
        assert env.observation_space.contains(turn.obs[0])
        env.process.kill()
        turn = env.step({s: 0 for s in turn.to_act})
        assert turn.truncated
        turn, _ = play_random(env, env.reset())
        assert turn.terminated and env.restarts == 1
    finally:
        env.close()
