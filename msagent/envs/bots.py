"""Scripted bots: a user script defining ``act(observation, action_mask) -> action`` (and
optionally ``reset()``, called at the start of each game).

A :class:`Bot` is a ``SeatActor`` of :mod:`msagent.envs.play`: called with a batch of
observations and masks, it returns one action per row, refusing illegal ones.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from msagent.envs.adapters.base import multi_nvec
from msagent.errors import IllegalActionError, ScriptError
from msagent.script_loader import load_script
from msagent.vocabulary import BUILTIN_RANDOM


class Bot:
    """A scripted bot loaded from a user script.

    Args:
        name: names the bot in messages (the script's file name by default).
        act: the script's ``act(observation, action_mask) -> action``.
        reset: the script's ``reset()``, or None.
    """

    def __init__(self, name: str, act: Any, reset: Any = None) -> None:
        self.name, self._act, self._reset = name, act, reset

    def reset(self) -> None:
        """Start a new game (calls the script's ``reset()`` when it has one)."""
        if self._reset is not None:
            self._reset()

    def act_batch(self, obs_list: Any, masks: Any) -> np.ndarray:
        """One action per row: the script's ``act`` on each (observation, mask); integers for
        discrete actions, float32 rows for continuous (Box) ones.

        Raises:
            ScriptError: ``act`` raised, or returned something that is not an action.
            IllegalActionError: ``act`` chose an action its row's mask forbids.
        """
        return action_batch([self._act_one(obs, None if masks is None else masks[i])
                             for i, obs in enumerate(obs_list)], self.name)

    __call__ = act_batch

    def _act_one(self, obs: Any, mask: np.ndarray | None) -> int | np.ndarray:
        """The script's checked action for one observation."""
        try:
            action = self._act(obs, mask)
        except Exception as exc:
            raise ScriptError(f"bot {self.name}: act() raised {type(exc).__name__}: {exc}") \
                from exc
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            return self._continuous(action)
        if mask is not None and not (0 <= action < len(mask) and mask[action]):
            raise IllegalActionError(f"bot {self.name} chose action {int(action)}, which is not "
                                     f"legal; legal actions: {np.flatnonzero(mask).tolist()}")
        return int(action)

    def _continuous(self, action: Any) -> np.ndarray:
        """A continuous (Box) action as float32, if it is finite numbers."""
        values = None
        if isinstance(action, (np.ndarray, list, tuple, float, np.floating)):
            try:
                values = np.asarray(action)
            except ValueError:  # ragged
                pass
        if values is None or values.dtype.kind not in "fiu" or not np.isfinite(values).all():
            raise ScriptError(f"bot {self.name}: act() returned {action!r} "
                              f"({type(action).__name__}); expected an integer action, or "
                              "finite numbers for a continuous (Box) action space")
        return values.astype(np.float32)


class RandomBot:
    """The built-in ``random`` opponent: a uniformly random legal action per row (a Box action
    as the space samples it), the baseline every game has without a bot script.

    Args:
        space: The action space the policies act in.
        seed: Seeds the choices, so that evaluations repeat.
    """

    name = "random"

    def __init__(self, space: Any, seed: int | None = None) -> None:
        self.space, self.rng = space, np.random.default_rng(seed)
        self.space.seed(None if seed is None else int(self.rng.integers(2**31)))

    def reset(self) -> None:
        """Nothing to forget between games."""

    def __call__(self, obs: Any, masks: Any) -> np.ndarray:
        """One random legal action per row of ``obs``."""
        return action_batch([random_action(self.space, None if masks is None else masks[i],
                                           self.rng) for i in range(len(obs))], self.name)

    act_batch = __call__


def make_bot(path: str, name: str, space: Callable[[], Any], seed: int | None = None) -> Any:
    """The bot of a ``[league.bots]`` entry: the built-in random bot (acting in ``space()``,
    the game's action space, asked only then) or a script's."""
    if path == BUILTIN_RANDOM:
        return RandomBot(space(), seed)
    return load_bot(path, name)


def load_bots(paths: dict[str, str], space: Callable[[], Any],
              seed: int | None = None) -> dict[str, Any]:
    """Every ``[league.bots]`` entry's bot (``space()`` asked at most once)."""
    held: list[Any] = []

    def once() -> Any:
        if not held:
            held.append(space())
        return held[0]

    return {name: make_bot(path, name, once, seed) for name, path in paths.items()}


def action_batch(actions: list[Any], bot: str) -> np.ndarray:
    """A bot's actions as one batch: int64 for discrete actions (int64 rows for multi-discrete
    ones), float32 rows for Box ones.

    Raises:
        ScriptError: the rows have different shapes (naming the bot).
    """
    if all(isinstance(a, int) for a in actions):
        return np.asarray(actions, dtype=np.int64)
    rows = [np.asarray(a) for a in actions]
    dtype = np.int64 if all(r.dtype.kind in "iu" for r in rows) else np.float32
    try:  # integer rows: multi-discrete actions (a Bot's Box rows are float32 already)
        return np.stack([r.astype(dtype, copy=False) for r in rows])
    except ValueError:
        shapes = sorted({np.shape(a) for a in actions})
        raise ScriptError(f"bot {bot}: act() returned actions of different shapes {shapes} "
                          "in one batch") from None


def random_action(space: Any, mask: np.ndarray | None, rng: np.random.Generator) -> Any:
    """A uniformly random legal action (one of the mask's, else the space's sample; for a
    multi-discrete space one of each component's, its mask's slice side by side)."""
    nvec = multi_nvec(space)
    if mask is not None and nvec is not None:
        starts = np.concatenate([[0], np.cumsum(nvec)]).astype(int)
        return np.array([rng.choice(np.flatnonzero(mask[a:b])) for a, b in zip(
            starts[:-1], starts[1:], strict=True)], np.int64) + getattr(space, "start", 0)
    if mask is not None:
        return int(rng.choice(np.flatnonzero(mask)))
    action = space.sample()
    return int(action) if isinstance(action, (int, np.integer)) else action


def load_bot(path: str, name: str = "") -> Bot:
    """The bot a user script defines (``act`` required, ``reset`` optional).

    Raises:
        ConfigError: the script does not exist or cannot be imported.
        ScriptError: the script defines no callable ``act``.
    """
    module = load_script(str(path))
    name = name or Path(path).stem
    act = getattr(module, "act", None)
    if not callable(act):
        raise ScriptError(f"bot script {path!r} must define a function "
                          "act(observation, action_mask) -> action")
    reset = getattr(module, "reset", None)
    return Bot(name, act, reset if callable(reset) else None)
