"""The environment script of the boxing league: PettingZoo's two-player Atari Boxing.

``boxing_v2`` (Parallel API: both boxers act every frame) is wrapped as Atari agents usually
see it: each decision held for 4 frames, frames in grayscale at 84x84, the last 4 stacked, and
one plane saying which boxer the seat controls (both seats see the same screen; 0 for the
white boxer, ``first_0``, 255 for the black one). Observations are ``(84, 84, 5)`` ``uint8``
(``(84, 84, 4)`` with ``seat_indicator=False``); 18 actions; a punch that lands is +1 for the
puncher and -1 for the other, so every step is zero-sum. A game lasts the boxing round's two
minutes (7,139 frames, about 1,785 decisions) unless a knock-out (100 punches) ends it sooner.

Needs ``multi-agent-ale-py`` (the two-player emulator) and ``ale-py`` (>= 0.9, whose package
ships the Boxing ROM; nothing is downloaded).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from msagent.envs.wrappers import ClipReward, FrameSkip, FrameStack, Grayscale, NoopStart
from msagent.envs.wrappers import Resize, SeatIndicator
from msagent.errors import ConfigError

ROUND_FRAMES = 7139
"""Frames of one two-minute boxing round (the game ends itself then)."""


def rom_dir() -> Path:
    """The folder of Atari ROMs that ``ale-py`` ships, holding ``boxing.bin``.

    Raises:
        ConfigError: ``ale-py`` is not installed, or its package holds no Boxing ROM.
    """
    spec = importlib.util.find_spec("ale_py")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the boxing example needs the Atari ROMs that ale-py ships; install "
                          "them with: pip install 'ale-py>=0.9'")
    roms = Path(next(iter(spec.submodule_search_locations))) / "roms"
    if not (roms / "boxing.bin").is_file():
        raise ConfigError(f"no Boxing ROM at {roms / 'boxing.bin'}: this ale-py ships no ROMs "
                          "(versions before 0.9 did not); pip install 'ale-py>=0.9'")
    return roms


def raw_boxing(max_cycles: int = ROUND_FRAMES + 1, direct: bool = True) -> Any:
    """PettingZoo's boxing_v2 Parallel env (RGB 210x160 frames), its ROM from ale-py.

    ``direct`` builds the ``ParallelAtariEnv`` that ``boxing_v2.parallel_env()`` itself wraps,
    with the same arguments, without the Parallel -> AEC -> Parallel conversion and bounds
    checks around it (msagent's adapter checks every action already): that round trip costs
    more than the emulator's frame (1.3 ms against 0.3 ms here). ``direct=False`` returns
    ``boxing_v2.parallel_env(...)`` as PettingZoo documents it.

    Raises:
        ConfigError: the two-player emulator or the ROM is missing (saying what to install).
    """
    if importlib.util.find_spec("multi_agent_ale_py") is None:
        raise ConfigError("the boxing example needs PettingZoo's two-player Atari emulator; "
                          "install it with: pip install multi-agent-ale-py==0.1.12")
    roms = str(rom_dir())
    if not direct:
        from pettingzoo.atari import boxing_v2

        return boxing_v2.parallel_env(max_cycles=max_cycles, auto_rom_install_path=roms)
    from pettingzoo.atari.base_atari_env import ParallelAtariEnv

    return ParallelAtariEnv(game="boxing", num_players=2, env_name="boxing_v2",
                            max_cycles=max_cycles, auto_rom_install_path=roms)


def make_env(max_cycles: int = ROUND_FRAMES + 1, frame_skip: int = 4, size: int = 84,
             stack: int = 4, seat_indicator: bool = True, max_pool: bool = False,
             clip_reward: bool = False, noop_max: int = 0) -> Any:
    """One boxing game as msagent plays it: skipped, grayscale, resized, stacked frames.

    Args:
        max_cycles: emulator frames before the game is cut short (truncated; the default is
            past the round's end, so games end by the clock or a knock-out).
        frame_skip: frames each decision is held for.
        size: side of the square frames.
        stack: frames per observation.
        seat_indicator: append the plane that tells the seat which boxer it controls.
        max_pool: observe the maximum of each decision's last two frames (the baselines' way).
        clip_reward: train on each decision's reward sign (wins and returns stay the points).
        noop_max: start each game after 1 to ``noop_max`` no-op frames (0: no no-ops).
    """
    game = raw_boxing(max_cycles)
    game = FrameSkip(NoopStart(game, noop_max) if noop_max else game, frame_skip,
                     max_pool=max_pool)
    game = FrameStack(Resize(Grayscale(game), size, size), stack)
    game = SeatIndicator(game) if seat_indicator else game
    return ClipReward(game) if clip_reward else game
