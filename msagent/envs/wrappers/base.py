"""What every wrapper shares: the wrapped game as a :class:`MultiAgentEnv`, and a base for
wrappers that change the seats' observations (``Turn.obs`` and ``Turn.final_obs`` alike)."""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters import as_multi_agent
from msagent.envs.multi_agent import MultiAgentEnv, Turn
from msagent.errors import ConfigError, ScriptError


class Wrapper:
    """A game around another one, forwarding seats, spaces, ``reset``, ``step`` and ``close``.

    Args:
        env: anything ``msagent.envs.adapters.as_multi_agent`` accepts (a MultiAgentEnv, a
            Gymnasium env, a PettingZoo AEC or Parallel env, an OpenSpiel game).
    """

    def __init__(self, env: Any) -> None:
        """Adapt ``env`` to the protocol once; copy its seats and spaces."""
        self.env: MultiAgentEnv = as_multi_agent(env)
        self.seats: tuple[str, ...] = tuple(self.env.seats)
        self.observation_space: Any = self.env.observation_space
        self.action_space: Any = self.env.action_space
        self.label: str = getattr(self.env, "label", "") or type(self.env).__name__

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game (the wrapped game's first turn)."""
        return self.env.reset(seed=seed)

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the seats' actions (the wrapped game's next turn)."""
        return self.env.step(actions)

    def close(self) -> None:
        """Release the wrapped game's resources."""
        self.env.close()

    @property
    def unwrapped(self) -> MultiAgentEnv:
        """The innermost game, so tests and tools can reach past every wrapper."""
        inner = self.env
        return inner.unwrapped if isinstance(inner, Wrapper) else inner


class ObservationWrapper(Wrapper):
    """Maps every observation a seat receives, in ``Turn.obs`` and ``Turn.final_obs``.

    Subclasses define :meth:`observation`; ``seat_independent`` wrappers (the same output for
    the same input, whoever sees it) compute a frame that several seats share only once per turn
    (simultaneous Atari games give every seat the same screen object).
    """

    seat_independent: bool = True

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game; its first turn with mapped observations."""
        self.start()
        return self._map(self.env.reset(seed=seed))

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the seats' actions; the next turn with mapped observations."""
        return self._map(self.env.step(actions))

    def start(self) -> None:
        """Forget per-game state at a game's start (nothing here; frame stacks clear theirs)."""

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """Seat ``seat``'s observation as this wrapper gives it."""
        raise NotImplementedError

    def _map(self, turn: Turn) -> Turn:
        """The turn with every observation mapped (final ones after the live ones)."""
        if not turn.obs and not turn.final_obs:
            return turn
        done: dict[int, np.ndarray] = {}
        obs = {seat: self._one(seat, o, done) for seat, o in turn.obs.items()}
        final = {seat: self._one(seat, o, done) for seat, o in turn.final_obs.items()}
        return dataclasses.replace(turn, obs=obs, final_obs=final)

    def _one(self, seat: int, obs: Any, done: dict[int, np.ndarray]) -> np.ndarray:
        """One mapped observation, reusing a seat-independent result of this turn."""
        if not self.seat_independent:
            return self.observation(seat, obs)
        key = id(obs)
        if key not in done:
            done[key] = self.observation(seat, obs)
        return done[key]


def image_space(space: Any, wrapper: str, label: str) -> gym.spaces.Box:
    """``space`` if it is a Box of images ``(H, W)`` or ``(H, W, C)``, else a clear error.

    Raises:
        ScriptError: naming the wrapper, the game and the space it got.
    """
    if not isinstance(space, gym.spaces.Box) or len(space.shape) not in (2, 3):
        raise ScriptError(f"{wrapper} needs image observations, a Box of shape (H, W) or "
                          f"(H, W, C); the game {label} has {space}")
    return space


def box_space(space: Any, wrapper: str, label: str) -> gym.spaces.Box:
    """``space`` if it is a Box (any shape, at least 1-d), else a clear error.

    Raises:
        ScriptError: naming the wrapper, the game and the space it got.
    """
    if not isinstance(space, gym.spaces.Box) or len(space.shape) == 0:
        raise ScriptError(f"{wrapper} needs Box observations of at least one dimension; the "
                          f"game {label} has {space}")
    return space


def positive(value: Any, name: str, wrapper: str) -> int:
    """``value`` as an int if it is a whole number >= 1, else a clear error.

    Raises:
        ConfigError: naming the wrapper, the argument and the value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{wrapper}: {name} must be an integer >= 1, got {value!r}")
    return int(value)
