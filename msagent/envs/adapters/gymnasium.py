"""A Gymnasium env as a one-seat game (seat ``agent_0``); as thin as it can be."""

from __future__ import annotations

from typing import Any

import numpy as np

from msagent.envs.adapters.base import check_action, check_seats
from msagent.envs.multi_agent import Turn

SEAT = "agent_0"
"""The name of the only seat."""

_TO_ACT = (0,)


class GymnasiumAdapter:
    """One-seat :class:`~msagent.envs.multi_agent.MultiAgentEnv` over a Gymnasium env.

    Rewards are ``[1]`` arrays; a truncated step puts the last observation in ``final_obs``.
    An ``info["action_mask"]`` the env provides becomes the seat's mask, as does the
    ``"action_mask"`` of a ``Dict`` observation of ``"observation"`` and ``"action_mask"``
    (PettingZoo's and RLlib's convention: the policy then sees ``"observation"`` alone).
    """

    seats = (SEAT,)

    def __init__(self, env: Any, label: str = "") -> None:
        self.env = env
        self.label = label or _label(env)
        space = env.observation_space
        self._dict_obs = masked_dict(space)
        self.observation_space = space["observation"] if self._dict_obs else space
        self.action_space = env.action_space
        self._mask: np.ndarray | None = None
        space = env.action_space
        self._range = (int(space.start), int(space.start + space.n)) \
            if hasattr(space, "n") and getattr(space, "shape", None) == () else None

    def reset(self, seed: int | None = None) -> Turn:
        """Reset the env; the first turn of seat 0."""
        obs, info = self.env.reset(seed=seed)
        return self._turn(obs, 0.0, False, False, info)

    def step(self, actions: dict[int, Any]) -> Turn:
        """Step with seat 0's action (refused before the env sees it when illegal)."""
        if len(actions) != 1 or 0 not in actions:
            check_seats(self.label, _TO_ACT, actions, self.seats)
        action = actions[0]
        if not self._legal_fast(action):  # the full check names what is wrong
            action = check_action(self.label, SEAT, action, self._mask, self.action_space)
        else:
            action = int(action)
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._turn(obs, reward, bool(terminated), bool(truncated), info)

    def _legal_fast(self, action: Any) -> bool:
        """A cheap yes for an integer action inside a Discrete space without a mask."""
        if self._range is None or self._mask is not None:
            return False
        if not isinstance(action, (int, np.integer)) or isinstance(action, bool):
            return False
        return self._range[0] <= action < self._range[1]

    def close(self) -> None:
        """Close the env."""
        self.env.close()

    def _turn(self, obs: Any, reward: float, terminated: bool, truncated: bool,
              info: dict[str, Any]) -> Turn:
        """The Turn of one env step."""
        rewards = np.array([reward], dtype=np.float64)
        mask = info.get("action_mask") if info else None
        if self._dict_obs:
            obs, mask = obs["observation"], obs["action_mask"]
        if terminated or truncated:
            self._mask = None
            final = {0: obs} if truncated else {}
            return Turn((), {}, None, rewards, terminated, truncated, final)
        self._mask = None if mask is None else np.asarray(mask, dtype=bool)
        masks = None if mask is None else {0: self._mask}
        return Turn(_TO_ACT, {0: obs}, masks, rewards)


def masked_dict(space: Any) -> bool:
    """Whether observations are ``{"observation": ..., "action_mask": ...}`` maps."""
    import gymnasium as gym

    return isinstance(space, gym.spaces.Dict) and set(space.spaces) == {"observation",
                                                                         "action_mask"}


def _label(env: Any) -> str:
    """The env's id (``CartPole-v1``) or its class name."""
    spec = getattr(env, "spec", None)
    return getattr(spec, "id", None) or type(getattr(env, "unwrapped", env)).__name__
