"""The environment script of the boxing league: PettingZoo's two-player Atari Boxing.

``boxing_v2`` (Parallel API: both boxers act every frame) is wrapped as Atari agents usually
see it: each decision held for 4 frames, frames in grayscale at 84x84, the last 4 stacked, and
one plane saying which boxer the seat controls (0 for the white boxer, ``first_0``, 255 for the
black one). Each seat sees itself as the white boxer (``own_colour``, :class:`OwnColour`): the
black boxer's seat gets the screen with the two boxers' (and scores') colours swapped, so one
network playing both seats learns one game, not two whose rewards cancel. Observations are
``(84, 84, 5)`` ``uint8`` (``(84, 84, 4)`` with ``seat_indicator=False``); 18 actions; a
punch that lands is +1 for the puncher and -1 for the other, so every step is zero-sum. A game
lasts the boxing round's two minutes (7,139 frames, about 1,785 decisions) unless a knock-out
(100 punches) ends it sooner.

Needs ``multi-agent-ale-py`` (the two-player emulator) and ``ale-py`` (>= 0.9, whose package
ships the Boxing ROM; nothing is downloaded).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from msagent.envs.wrappers import ClipReward, FrameSkip, FrameStack, Grayscale, NoopStart
from msagent.envs.wrappers import ObservationWrapper, PotentialShaping, Resize, SeatIndicator
from msagent.errors import ConfigError

ROUND_FRAMES = 7139
"""Frames of one two-minute boxing round (the game ends itself then)."""

WHITE, BLACK = 214, 0
"""Grayscale levels of the white boxer (and its score) and of the black boxer (and its score)."""

BORDER_COLS = 8
"""Columns at the screen's left that the console always blanks to black (not a boxer)."""

RAM_X, RAM_Y = (32, 33), (34, 35)
"""RAM bytes of the white and the black boxer's column and row (the AtariARI annotations)."""

RING_DIAGONAL = float(np.hypot(109 - 30, 87 - 4))
"""Longest distance between the boxers in RAM units (columns 30-109, rows 4-87)."""


class OwnColour(ObservationWrapper):
    """Shows every seat itself as the white boxer: the second seat's grayscale screens get the
    levels ``WHITE`` and ``BLACK`` swapped (right of the blanked border), the first seat's are
    left as they are.

    Why: with one screen for both seats, the same picture of a landed punch is +1 for one seat
    and -1 for the other, so a network shared by both seats sees every outcome with both signs
    and learns little but the mean (zero). Seen from its own colour, the picture means the same
    to either seat. Positions are not mirrored: the boxers start on opposite sides, as the
    seat plane still says.

    Args:
        env: the boxing game after :class:`Grayscale` (``(210, 160)`` frames), before resizing
            (so the swap is exact, not blurred by interpolation).
    """

    seat_independent = False

    def __init__(self, env: Any) -> None:
        """Build the level table of the swap once."""
        super().__init__(env)
        self._swap = np.arange(256, dtype=np.uint8)
        self._swap[[WHITE, BLACK]] = BLACK, WHITE

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The frame as seat ``seat`` sees it (seat 1's a swapped copy; seat 0's unchanged)."""
        if seat == 0:
            return obs
        seen = obs.copy()
        seen[:, BORDER_COLS:] = self._swap[obs[:, BORDER_COLS:]]
        return seen


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


def approach_potential(game: Any, scale: float) -> np.ndarray:
    """Both seats' potential for :class:`PotentialShaping`: ``-scale`` times the boxers'
    distance as a share of the ring's diagonal, read from the emulator's RAM.

    Why: against a boxer that does not come near (the random bot), a punch seldom lands and
    the game's rewards are almost all zero; closing in is what every landed punch needs first.
    """
    ram = getattr(game, "unwrapped", game).ale.getRAM().astype(float)
    distance = np.hypot(ram[RAM_X[0]] - ram[RAM_X[1]], ram[RAM_Y[0]] - ram[RAM_Y[1]])
    return np.full(2, -scale * distance / RING_DIAGONAL)


def make_env(max_cycles: int = ROUND_FRAMES + 1, frame_skip: int = 4, size: int = 84,
             stack: int = 4, seat_indicator: bool = True, max_pool: bool = False,
             clip_reward: bool = False, noop_max: int = 0, own_colour: bool = True,
             approach: float = 0.0) -> Any:
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
        own_colour: show each seat itself as the white boxer (:class:`OwnColour`); False: both
            seats see the screen as it is.
        approach: potential-based shaping for closing in (:func:`approach_potential`): each
            seat earns up to ``approach`` for walking from the ring's far corner to the other
            boxer, and loses it walking away; 0 trains on the game's points alone.
    """
    game = raw = raw_boxing(max_cycles)
    game = FrameSkip(NoopStart(game, noop_max) if noop_max else game, frame_skip,
                     max_pool=max_pool)
    game = Grayscale(game)
    game = FrameStack(Resize(OwnColour(game) if own_colour else game, size, size), stack)
    game = SeatIndicator(game) if seat_indicator else game
    game = ClipReward(game) if clip_reward else game
    if approach:
        return PotentialShaping(game, lambda: approach_potential(raw, approach))
    return game
