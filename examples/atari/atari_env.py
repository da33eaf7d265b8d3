"""The environment script of the single-player Atari example: an ALE game against its own AI.

Gymnasium's ``ALE/<Game>-v5`` with the emulator's own frame skip and sticky actions off, then
the same msagent wrappers the two-player Boxing league uses: each decision held for 4 frames
(rewards summed), grayscale, resized, the last 4 frames stacked. With ``game = "Boxing"`` this
is the Boxing league's image path against the game's built-in boxer, which published PPO
curves are measured against: the check that tells a fault in the image path from too little
compute. Needs ``ale-py >= 0.9`` (its package ships the ROMs; nothing is downloaded).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from msagent.envs.wrappers import ClipReward, FrameSkip, FrameStack, Grayscale, NoopStart
from msagent.envs.wrappers import Resize
from msagent.errors import ConfigError


def make_env(game: str = "Boxing", frame_skip: int = 4, size: int = 84, stack: int = 4,
             max_frames: int = 108_000, max_pool: bool = False, clip_reward: bool = False,
             noop_max: int = 0) -> Any:
    """One ALE game (one seat) with skipped, grayscale, resized and stacked frames.

    Args:
        game: the ALE game's name, as in ``ALE/<game>-v5``.
        frame_skip: frames each decision is held for.
        size: side of the square frames.
        stack: frames per observation.
        max_frames: emulator frames before a game is truncated (ALE's default, 30 minutes).
        max_pool: observe the maximum of each decision's last two frames (the baselines' way).
        clip_reward: train on each decision's reward sign (the baselines' way).
        noop_max: start each game after 1 to ``noop_max`` no-op frames (0: no no-ops).

    Raises:
        ConfigError: ``ale-py`` is not installed (saying what to install).
    """
    if importlib.util.find_spec("ale_py") is None:
        raise ConfigError("the Atari example needs ale-py: pip install 'ale-py>=0.9'")
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    env = gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0,
                   max_num_frames_per_episode=max_frames)
    if noop_max:
        env = NoopStart(env, noop_max)
    env = FrameSkip(env, frame_skip, max_pool=max_pool)
    env = FrameStack(Resize(Grayscale(env), size, size), stack)
    return ClipReward(env) if clip_reward else env
