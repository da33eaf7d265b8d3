"""One observation space for games whose seats observe different ones: MPE's predator and
prey, a speaker and a listener. msagent's policies read one space, so that one network (with
its seat told apart) plays every seat, as parameter sharing across heterogeneous agents does
(SuperSuit's ``pad_observations_v0`` and ``agent_indicator_v0``, which take PettingZoo envs
only; this takes every game msagent takes)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters import as_multi_agent
from msagent.envs.wrappers.base import ObservationWrapper, box_space
from msagent.errors import ScriptError


class PadObservations(ObservationWrapper):
    """Each seat's observation raveled, padded with zeros to the largest seat's size, then (by
    default) a one-hot of the seat: ``(8,)`` and ``(19,)`` for two seats become ``(21,)``
    float32 for both.

    Put it directly around the game (the PettingZoo env): the other wrappers need one space.

    Args:
        env: a game whose seats observe Boxes (a PettingZoo env's per-seat spaces, or an
            msagent game's ``observation_spaces``, one per seat; else its one space).
        seat_one_hot: append the one-hot of the seat, so the network knows which seat it
            plays (needed whenever seats with different roles share a size).
    """

    seat_independent = False

    def __init__(self, env: Any, seat_one_hot: bool = True) -> None:
        """Work out the padded space from every seat's Box."""
        game = as_multi_agent(env, seat_spaces=True)
        super().__init__(game)
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
