"""What every adapter shares: refusing illegal actions before the game sees them, masks,
optional imports with a clear message."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.errors import ConfigError, IllegalActionError, ScriptError

INSTALL_HINTS = {"pettingzoo": "pip install 'pettingzoo[classic]'",
                 "pyspiel": "pip install open_spiel"}
"""How to install each optional game library."""


def optional_import(module: str) -> ModuleType:
    """Import an optional game library, or say how to install it.

    Raises:
        ConfigError: the library is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        hint = INSTALL_HINTS.get(top, f"pip install {top}")
        raise ConfigError(f"this environment needs the optional package {top!r}, which is "
                          f"not installed ({exc}); install it with: {hint}") from exc


def check_seats(game: str, to_act: Sequence[int], actions: dict[int, Any],
                seats: Sequence[str]) -> None:
    """Refuse an action dict whose seats are not exactly those to act.

    Raises:
        IllegalActionError: naming the game, the seats expected and the seats given.
    """
    if len(actions) != len(to_act) or any(s not in actions for s in to_act):
        expected = [seats[s] for s in to_act]
        got = [seats[s] if isinstance(s, int) and 0 <= s < len(seats) else s for s in actions]
        raise IllegalActionError(f"{game}: step needs one action for each seat to act "
                                 f"{expected} (by seat index {list(to_act)}), got {got}")


SPACE_FIXES = {
    "observation": "msagent's policies read one observation space for every seat: wrap the "
                   "game in msagent.envs.wrappers.PadObservations(env), which pads each seat's "
                   "observation with zeros to the largest and appends a one-hot of the seat",
    "action": "msagent's policies act in one action space for every seat: wrap the game in "
              "msagent.envs.wrappers.PadSeats(env), which pads the observations as "
              "PadObservations does and each seat's actions to the largest space (the extra "
              "Discrete actions masked off, the extra Box values ignored)"}
"""How to fix a game whose seats have different spaces, by kind of space."""


def check_same_spaces(game: str, seats: Sequence[str], spaces: Sequence[Any], kind: str) -> None:
    """Refuse a game whose seats differ in their ``kind`` ("observation" or "action") space;
    observation Boxes count as the same when shape and dtype agree (their bounds may not).

    Raises:
        ScriptError: naming the game, each group of seats with its space, and the fix.
    """
    groups: dict[int, list[str]] = {}
    for i, space in enumerate(spaces):
        first = next((j for j in groups if _same_space(spaces[j], space, kind)), i)
        groups.setdefault(first, []).append(seats[i])
    if len(groups) > 1:
        parts = "; ".join(f"{', '.join(names)}: {spaces[j]}" for j, names in groups.items())
        raise ScriptError(f"the seats of {game} have different {kind} spaces ({parts}); "
                          f"{SPACE_FIXES[kind]}")


def _same_space(a: Any, b: Any, kind: str) -> bool:
    """Whether two seats' spaces count as one (see :func:`check_same_spaces`)."""
    if kind == "observation" and isinstance(a, gym.spaces.Box) and isinstance(b, gym.spaces.Box):
        return a.shape == b.shape and a.dtype == b.dtype
    return bool(a == b)


def check_action(game: str, seat: str, action: Any, mask: np.ndarray | None,
                 space: Any = None) -> Any:
    """The action as the game expects it (an int for discrete actions, an int64 row for
    multi-discrete ones), if it is legal.

    Raises:
        IllegalActionError: naming the game, the seat, the action and the legal actions.
    """
    nvec = multi_nvec(space)
    if nvec is not None:
        return _checked_row(game, seat, action, mask, space, nvec)
    if mask is not None:
        index = as_index(action)
        if index is None or not 0 <= index < mask.shape[0] or not mask[index]:
            legal = np.flatnonzero(mask).tolist()
            raise IllegalActionError(f"{game}: seat {seat} chose action {action!r}, which is "
                                     f"not legal; legal actions: {legal}")
        return index
    if space is not None and not _in_space(action, space):
        raise IllegalActionError(f"{game}: seat {seat} chose action {action!r}, which is "
                                 f"outside the action space {space}")
    return as_index(action) if _is_discrete(space) else action


def mask_of(legal: Iterable[int], size: int) -> np.ndarray:
    """A bool ``[size]`` mask with the ``legal`` indices set."""
    mask = np.zeros(size, dtype=bool)
    mask[list(legal)] = True
    return mask


def as_index(action: Any) -> int | None:
    """An integer action as a Python int; None when it is not an integer."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
        return int(action)
    return None


def full_mask(space: Any) -> np.ndarray | None:
    """An all-legal mask of a Discrete (``[n]``) or MultiDiscrete (``[sum(nvec)]``) space;
    None for other spaces (a Box has no mask)."""
    if _is_discrete(space):
        return np.ones(int(space.n), dtype=bool)
    nvec = multi_nvec(space)
    return None if nvec is None else np.ones(int(np.sum(nvec)), dtype=bool)


def _checked_row(game: str, seat: str, action: Any, mask: np.ndarray | None, space: Any,
                 nvec: np.ndarray) -> np.ndarray:
    """A multi-discrete action as an int64 row (whole floats accepted, as a bot script's list
    arrives), in the space and, with a mask (each component's side by side), legal."""
    row = np.asarray(action)
    if row.dtype.kind == "f" and row.shape == space.shape and np.all(np.mod(row, 1) == 0):
        row = row.astype(np.int64)
    if not _in_space(row, space) or row.dtype.kind not in "iu":
        raise IllegalActionError(f"{game}: seat {seat} chose action {action!r}, which is "
                                 f"outside the action space {space}")
    if mask is not None:
        starts = np.concatenate([[0], np.cumsum(nvec)[:-1]])
        offset = getattr(space, "start", 0)
        if mask.shape != (int(np.sum(nvec)),) or not mask[starts + row - offset].all():
            raise IllegalActionError(f"{game}: seat {seat} chose action {row.tolist()}, which "
                                     f"is not legal under the mask {mask.astype(int).tolist()} "
                                     f"(each component's choices side by side, {space})")
    return row.astype(np.int64, copy=False)


def multi_nvec(space: Any) -> np.ndarray | None:
    """The choices per component of a 1-d MultiDiscrete (``nvec``) or MultiBinary (all 2)
    space; None for any other space."""
    if isinstance(space, gym.spaces.MultiDiscrete) and len(space.shape) == 1:
        return np.asarray(space.nvec)
    if isinstance(space, gym.spaces.MultiBinary) and len(space.shape) == 1:
        return np.full(space.shape, 2)
    return None


def _is_discrete(space: Any) -> bool:
    """Whether ``space`` is a gymnasium Discrete space."""
    return isinstance(space, gym.spaces.Discrete)


def _in_space(action: Any, space: Any) -> bool:
    """Whether ``action`` lies in ``space`` (a fast path for Discrete)."""
    if _is_discrete(space):
        index = as_index(action)
        return index is not None and space.start <= index < space.start + space.n
    try:
        return bool(space.contains(action))
    except (TypeError, ValueError, AttributeError):
        return False


def seat_names(count: int) -> tuple[str, ...]:
    """``("player_0", "player_1", ...)``: seat names of games that do not name their seats."""
    return tuple(f"player_{i}" for i in range(count))
