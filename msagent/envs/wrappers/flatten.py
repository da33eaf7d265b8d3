"""Any fixed-size observation space as one flat float32 vector, for every game msagent takes.

msagent's policies read 1-d vectors (MLP) or ``(H, W, C)`` images (CNN). A game that observes a
``Discrete`` state (PettingZoo's rock-paper-scissors, FrozenLake), a ``Dict`` or ``Tuple`` of
parts, ``MultiDiscrete`` or ``MultiBinary`` values, or a Box of another rank goes through
:class:`Flatten` first. It uses Gymnasium's own ``flatten_space`` / ``flatten`` (``Discrete``
one-hot, parts concatenated in the space's order), which ``gymnasium.wrappers.FlattenObservation``
applies to one-seat Gymnasium envs only; this applies them to every seat of any game.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.wrappers.base import ObservationWrapper
from msagent.errors import ScriptError


class Flatten(ObservationWrapper):
    """Every seat's observation as a flat float32 vector (``Discrete(n)`` becomes one-hot).

    Args:
        env: a game whose observation space is a Gymnasium space of fixed size (not
            ``Graph`` or ``Sequence``; ``Text`` becomes its padded character indices).
    """

    def __init__(self, env: Any) -> None:
        """Work out the flat space; a space without a fixed size is a clear error."""
        super().__init__(env)
        self._space = self.observation_space
        if not isinstance(self._space, gym.spaces.Space):
            raise ScriptError(f"Flatten needs a Gymnasium observation space; the game "
                              f"{self.label} has {self._space!r}")
        try:
            flat = gym.spaces.flatten_space(self._space)
        except (NotImplementedError, ValueError, TypeError):
            flat = None
        if not isinstance(flat, gym.spaces.Box):  # Sequence, Graph: no fixed size
            raise ScriptError(f"Flatten cannot flatten the observation space {self._space} of "
                              f"the game {self.label}: it has no fixed size")
        self.observation_space = gym.spaces.Box(flat.low.astype(np.float32),
                                                flat.high.astype(np.float32), dtype=np.float32)

    def observation(self, seat: int, obs: Any) -> np.ndarray:
        """The observation flattened as its space says, as float32."""
        return np.asarray(gym.spaces.flatten(self._space, obs), dtype=np.float32)
