"""One observation space (and, with ``PadSeats``, one action space) for games whose seats have
different ones: MPE's predator and prey, a speaker and a listener. msagent's policies read one
space, so that one network (with its seat told apart) plays every seat, as parameter sharing
across heterogeneous agents does (SuperSuit's ``pad_observations_v0``, ``agent_indicator_v0``
and ``pad_action_space_v0``, which take PettingZoo envs only; these take every game msagent
takes)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.base import check_same_spaces
from msagent.envs.multi_agent import Turn
from msagent.envs.wrappers.base import ObservationWrapper, box_space
from msagent.envs.wrappers.seat_actions import SeatActions
from msagent.errors import ScriptError


class PadObservations(ObservationWrapper):
    """Each seat's observation raveled, padded with zeros to the largest seat's size, then (by
    default) a one-hot of the seat: ``(8,)`` and ``(19,)`` for two seats become ``(21,)``
    float32 for both.

    Put it directly around the game (the PettingZoo env): the other wrappers need one space.
    Seats that also act in different spaces need :class:`PadSeats` instead.

    Args:
        env: a game whose seats observe Boxes (a PettingZoo env's per-seat spaces, or an
            msagent game's ``observation_spaces``, one per seat; else its one space).
        seat_one_hot: append the one-hot of the seat, so the network knows which seat it
            plays (needed whenever seats with different roles share a size).
    """

    seat_independent = False
    pads_actions = False
    """Whether the wrapper also makes the seats' action spaces one (PadSeats)."""

    def __init__(self, env: Any, seat_one_hot: bool = True) -> None:
        """Work out the padded space from every seat's Box."""
        game = as_multi_agent(env, seat_spaces=True)
        super().__init__(game)
        self.action_spaces = getattr(game, "action_spaces", None) or \
            (self.action_space,) * len(self.seats)
        if not self.pads_actions:
            check_same_spaces(self.label, self.seats, self.action_spaces, "action")
        spaces = getattr(game, "observation_spaces", None) or \
            (self.observation_space,) * len(self.seats)
        boxes = [box_space(s, "PadObservations", self.label) for s in spaces]
        self._width = max(int(np.prod(b.shape)) for b in boxes)
        tail = len(self.seats) if seat_one_hot else 0
        lows = np.stack([self._padded(b.low, tail) for b in boxes])
        highs = np.stack([self._padded(b.high, tail) for b in boxes])
        highs[:, self._width:] = 1.0
        self.observation_space = gym.spaces.Box(lows.min(axis=0), highs.max(axis=0),
                                                dtype=np.float32)
        self._one_hot = [np.eye(tail, dtype=np.float32)[s] if tail else None
                         for s in range(len(self.seats))]

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The seat's observation padded, with its seat's one-hot."""
        one_hot = self._one_hot[seat]
        out = self._padded(obs, 0 if one_hot is None else one_hot.shape[0])
        if one_hot is not None:
            out[self._width:] = one_hot
        return out

    def _padded(self, values: Any, tail: int) -> np.ndarray:
        """``values`` raveled as float32, then zeros up to the width and ``tail`` more.

        Raises:
            ScriptError: ``values`` are more than the largest seat's space holds.
        """
        flat = np.asarray(values, dtype=np.float32).ravel()
        if flat.shape[0] > self._width:
            raise ScriptError(f"PadObservations: the game {self.label} gave an observation of "
                              f"{flat.shape[0]} values, more than any seat's space holds "
                              f"({self._width})")
        out = np.zeros(self._width + tail, dtype=np.float32)
        out[:flat.shape[0]] = flat
        return out


class PadSeats(PadObservations):
    """:class:`PadObservations` for seats that also act in different spaces: Discrete actions
    padded to the largest seat's (``Discrete(3)`` and ``Discrete(5)`` become ``Discrete(5)``,
    actions 3 and 4 masked off for the first seat), Box actions to the most values (the extra
    values ignored, each seat's clipped to its own bounds).

    Args:
        env: a game whose seats observe Boxes and act in Discrete spaces, or in Box spaces.
        seat_one_hot: append the one-hot of the seat to the observation (as PadObservations).
    """

    pads_actions = True

    def __init__(self, env: Any, seat_one_hot: bool = True) -> None:
        """Pad the observations; work out the padded action space."""
        super().__init__(env, seat_one_hot)
        self._actions = SeatActions(self.action_spaces, self.seats, self.label)
        self.action_space = self._actions.space
        self.action_spaces = (self.action_space,) * len(self.seats)

    def reset(self, seed: int | None = None) -> Turn:
        """The first turn, padded, with masks for seats that lack some actions."""
        return self._actions.masked(super().reset(seed))

    def step(self, actions: dict[int, Any]) -> Turn:
        """Each seat's action in its own space; the next turn, padded and masked."""
        return self._actions.masked(super().step(self._actions.unpadded(actions)))
