"""The multi-seat game protocol every msagent env speaks (a Gymnasium env is the one-seat case).

A game has S seats, numbered 0..S-1 (``seats`` names them). After ``reset`` and after each
``step`` it says which seats act next, with their observations and legal-action masks, and
what every seat earned meanwhile. Turn-based games name one seat at a time; simultaneous games
name every live seat. Adapters (``msagent.envs.adapters``) turn Gymnasium, PettingZoo AEC and
Parallel envs and OpenSpiel games into this protocol; ``as_multi_agent`` picks the right one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from msagent.vocabulary import AgentId


@dataclass
class Turn:
    """What a game says after ``reset`` or ``step``.

    Attributes:
        to_act: Seats that must act next, in seat order (empty once the game is over).
        obs: Observation of each seat in ``to_act`` (matching ``observation_space``).
        masks: Legal actions of each seat in ``to_act`` as a bool ``[A]`` array, or None when
            the game has no masks (every action legal).
        rewards: ``[S]`` float rewards every seat earned since the previous turn.
        terminated: The game ended (win, loss, draw).
        truncated: The game was cut short (a time limit); ``final_obs`` then holds each
            seat's last observation, so that a learner can bootstrap from it.
        final_obs: Seat -> last observation, set only when ``truncated``.
        score: ``[S]`` the game's own points since the previous turn, where a wrapper trains
            on other rewards (``ClipReward``'s signs); None when ``rewards`` are the points.
            Returns, wins and losses are counted on the points (:func:`points`).
    """

    to_act: tuple[int, ...]
    obs: dict[int, np.ndarray]
    masks: dict[int, np.ndarray] | None
    rewards: np.ndarray
    terminated: bool = False
    truncated: bool = False
    final_obs: dict[int, np.ndarray] = field(default_factory=dict)
    score: np.ndarray | None = None

    @property
    def done(self) -> bool:
        """The game is over (terminated or truncated)."""
        return self.terminated or self.truncated


def points(turn: Turn) -> np.ndarray:
    """The game's own points of a turn, so returns and outcomes ignore reward shaping."""
    return np.asarray(turn.rewards if turn.score is None else turn.score, dtype=float)


@runtime_checkable
class MultiAgentEnv(Protocol):
    """A game with ``len(seats)`` seats; every seat shares one observation and action space.

    ``step`` takes the actions of exactly the seats of the last ``Turn.to_act`` (seat ->
    action) and raises ``IllegalActionError`` for an action outside the seat's mask.
    """

    seats: tuple[AgentId, ...]
    observation_space: Any
    action_space: Any

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game; the first turn."""
        ...

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the actions of the seats to act; the next turn."""
        ...

    def close(self) -> None:
        """Release the game's resources."""
        ...
