"""Reward wrappers that train on other rewards than the game's points, which travel on in
``Turn.score`` so that returns, wins and losses stay the game's.

- :class:`ClipReward`: each seat's reward becomes its sign, so games that score in different
  units (1 or 2 points a punch, hundreds a brick) train with the same step sizes; the Atari PPO
  and DQN baselines train on ``sign(r)`` and report the game's own score.
- :class:`PotentialShaping`: adds ``phi(s') - phi(s)`` for a potential the env script gives
  (Ng, Harada and Russell, 1999), a dense hint that leaves the best policies as they were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from msagent.envs.multi_agent import Turn, points
from msagent.envs.wrappers.base import Wrapper
from msagent.errors import ScriptError


class ClipReward(Wrapper):
    """Every turn's rewards as their signs (-1, 0 or +1 per seat).

    Put it outside ``FrameSkip`` to clip each decision's summed reward, as the baselines do.
    The game's own points travel on in ``Turn.score``, so logged returns, wins and losses stay
    the game's (as the baselines log the score, not the clipped sum).

    Args:
        env: any game speaking the protocol.
    """

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game; its first turn with clipped rewards."""
        return _clipped(self.env.reset(seed=seed))

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the seats' actions; the next turn with clipped rewards."""
        return _clipped(self.env.step(actions))


def _clipped(turn: Turn) -> Turn:
    """The turn with each seat's reward replaced by its sign, its points kept as the score."""
    rewards = np.asarray(turn.rewards, dtype=float)
    return dataclasses.replace(turn, rewards=np.sign(rewards), score=points(turn))


class PotentialShaping(Wrapper):
    """Adds potential-based shaping to every seat's reward: ``phi(s') - phi(s)`` per turn.

    The shaping sums over a game to ``phi(end) - phi(start)``; a game that ends (not one cut
    short) ends at potential 0, so every policy gets the same total from a given start and the
    best policies stay the best (Ng, Harada and Russell, 1999), while each step says whether it
    went the right way. The game's own points travel on in ``Turn.score``.

    Args:
        env: any game speaking the protocol (put it outside ``ClipReward``, or the signs of the
            shaping terms would be what is trained on).
        potential: called after each ``reset`` and ``step``; each seat's potential now, as
            ``[S]`` finite floats (e.g. minus the distance to the opponent, read from the
            emulator's RAM).
    """

    def __init__(self, env: Any, potential: Callable[[], Any]) -> None:
        """Keep the potential; the first one is read at ``reset``."""
        super().__init__(env)
        self.potential = potential
        self._phi = np.zeros(len(self.seats))

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game and read its first potential (its first turn has no shaping)."""
        turn = self.env.reset(seed=seed)
        self._phi = self._read()
        return turn

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the seats' actions; the next turn with the potential's change added."""
        turn = self.env.step(actions)
        phi = np.zeros(len(self.seats)) if turn.terminated else self._read()
        shaped = np.asarray(turn.rewards, dtype=float) + phi - self._phi
        self._phi = phi
        return dataclasses.replace(turn, rewards=shaped, score=points(turn))

    def _read(self) -> np.ndarray:
        """The seats' potentials now, checked."""
        phi = np.asarray(self.potential(), dtype=float)
        if phi.shape != (len(self.seats),) or not np.isfinite(phi).all():
            raise ScriptError(f"PotentialShaping: the potential must give {len(self.seats)} "
                              f"finite floats (one per seat), got {phi!r}")
        return phi
