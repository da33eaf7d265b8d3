"""The single-player Atari example (``examples/atari_ppo.toml``): an ALE game against its own AI
through the wrappers the Boxing league uses. Skipped only when ale-py is not installed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ale_py", reason="pip install 'ale-py>=0.9' (ships the ROMs)")

from msagent.config.loader import load_config  # noqa: E402
from msagent.user_scripts import build_policy, load_script  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
ENV_SCRIPT = REPO / "examples" / "atari" / "atari_env.py"
atari_env = load_script(str(ENV_SCRIPT))


def test_boxing_is_one_seat_of_stacked_grayscale_frames_against_the_game_ai() -> None:
    env = atari_env.make_env(size=42, max_frames=400)
    turn = env.reset(seed=0)
    assert env.seats == ("agent_0",) and turn.to_act == (0,)
    assert turn.obs[0].shape == (42, 42, 4) and turn.obs[0].dtype == np.uint8
    rng, decisions, total = np.random.default_rng(0), 0, 0.0
    while not turn.done:
        turn = env.step({0: int(rng.integers(18))})
        decisions, total = decisions + 1, total + float(turn.rewards[0])
    assert decisions == 100  # 400 emulator frames, each decision held for 4
    assert turn.truncated and not turn.terminated
    assert total == int(total)  # points: punches landed minus punches taken
    env.close()


@pytest.mark.slow
def test_the_baselines_preprocessing_trains_on_signs_and_counts_the_points() -> None:
    env = atari_env.make_env(size=42, max_frames=2000, max_pool=True, clip_reward=True,
                             noop_max=30)
    firsts = {env.reset(seed=seed).obs[0].tobytes() for seed in range(6)}
    assert len(firsts) > 1  # the no-op starts differ
    turn, rng, scores = env.reset(seed=0), np.random.default_rng(0), []
    while not turn.done:
        turn = env.step({0: int(rng.integers(18))})
        np.testing.assert_array_equal(turn.rewards, np.sign(turn.score))
        scores.append(float(turn.score[0]))
    assert any(s != 0 for s in scores) and max(abs(s) for s in scores) >= 1
    env.close()


def test_the_example_config_trains_the_boxing_cnn_on_it() -> None:
    cfg = load_config(REPO / "examples" / "atari_ppo.toml")
    assert cfg.env == {"game": "Boxing", "frame_skip": 4, "size": 84, "max_pool": True,
                       "clip_reward": True, "noop_max": 30}
    policy = build_policy(str(ENV_SCRIPT), str(REPO / "examples" / cfg.scripts.agent),
                          cfg.env, 0)
    assert policy.obs_shape == (84, 84, 4) and policy.action_spec.size == 18
