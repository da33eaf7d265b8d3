"""One action space for seats that act in different ones: MPE's speaker (3 actions) and
listener (5), a lead adversary that also speaks. Discrete spaces are padded to the largest, the
extra actions masked off for the seats that lack them; Box spaces are padded to the most values,
the extra values ignored (as SuperSuit's ``pad_action_space_v0``, with masks instead of mapping
an unusable action to a default one)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters.base import as_index
from msagent.envs.multi_agent import Turn
from msagent.errors import IllegalActionError, ScriptError


class SeatActions:
    """The padded action space of a game's seats, their masks, and each padded action turned
    back into the seat's own.

    Args:
        spaces: Each seat's action space, all Discrete or all Box.
        seats: The seats' names, for errors.
        label: The game's name, for errors.

    Raises:
        ScriptError: the spaces mix kinds, or one is neither Discrete nor Box.
    """

    def __init__(self, spaces: Sequence[Any], seats: Sequence[str], label: str) -> None:
        """Work out the padded space."""
        self.spaces, self.seats, self.label = tuple(spaces), tuple(seats), label
        if all(isinstance(s, gym.spaces.Discrete) for s in spaces):
            self.space: Any = gym.spaces.Discrete(max(int(s.n) for s in spaces))
            self._sizes = [int(s.n) for s in spaces]
            self._ragged = len(set(self._sizes)) > 1
        elif all(isinstance(s, gym.spaces.Box) for s in spaces):
            self.space = _padded_box(spaces)
            self._ragged = False  # every padded Box action is legal for every seat
        else:
            kinds = "; ".join(f"{name}: {space}" for name, space in zip(seats, spaces))
            raise ScriptError(f"PadSeats pads Discrete action spaces to the largest, or Box "
                              f"spaces to the most values, not a mix or other spaces; the seats "
                              f"of {label} act in {kinds}")

    def masked(self, turn: Turn) -> Turn:
        """The turn with masks that rule out each seat's padding (the game's own masks kept)."""
        if not self._ragged or not turn.to_act:
            return turn
        width = self.space.n
        masks = {}
        for seat in turn.to_act:
            own = None if turn.masks is None else turn.masks.get(seat)
            mask = np.zeros(width, dtype=bool)
            if own is None:
                mask[:self._sizes[seat]] = True
            else:
                mask[:own.shape[0]] = own
            masks[seat] = mask
        return dataclasses.replace(turn, masks=masks)

    def unpadded(self, actions: dict[int, Any]) -> dict[int, Any]:
        """Each seat's padded action as an action of its own space."""
        return {seat: self._one(seat, action) for seat, action in actions.items()}

    def _one(self, seat: int, action: Any) -> Any:
        """One seat's action in its own space.

        Raises:
            IllegalActionError: a Discrete action the seat lacks, or a Box action of the wrong
                size (naming the game, the seat and the action).
        """
        space = self.spaces[seat] if 0 <= seat < len(self.spaces) else None
        if isinstance(space, gym.spaces.Discrete):
            index = as_index(action)
            if index is None or not 0 <= index < space.n:
                raise IllegalActionError(f"{self.label}: seat {self.seats[seat]} chose action "
                                         f"{action!r}, which is not one of its {space.n} "
                                         f"actions (PadSeats masks the others)")
            return int(space.start) + index
        if isinstance(space, gym.spaces.Box):
            flat = np.asarray(action, dtype=space.dtype).ravel()
            if flat.shape[0] != self.space.shape[0]:
                raise IllegalActionError(f"{self.label}: seat {self.seats[seat]} chose action "
                                         f"{action!r}; PadSeats takes {self.space.shape[0]} "
                                         f"values")
            own = flat[:int(np.prod(space.shape))].reshape(space.shape)
            return np.clip(own, space.low, space.high)  # the padded bounds are the seats' union
        return action  # not a seat: the game refuses it, naming the seats


def _padded_box(spaces: Sequence[gym.spaces.Box]) -> gym.spaces.Box:
    """A flat Box with the most values of any seat; each value's bounds span every seat that
    has it."""
    width = max(int(np.prod(s.shape)) for s in spaces)
    low = np.full(width, np.inf)
    high = np.full(width, -np.inf)
    for space in spaces:
        n = int(np.prod(space.shape))
        low[:n] = np.minimum(low[:n], space.low.ravel())
        high[:n] = np.maximum(high[:n], space.high.ravel())
    dtype = np.result_type(*(s.dtype for s in spaces))
    return gym.spaces.Box(low.astype(dtype), high.astype(dtype), dtype=dtype)
