"""PettingZoo AEC (turn-based) and Parallel (simultaneous) envs as multi-seat games.

Seats are the env's ``possible_agents`` in order. Dict observations
``{"observation": ..., "action_mask": ...}`` (the classic games) are split: the mask becomes a
bool array and ``observation_space`` is the ``"observation"`` subspace. Nothing here imports
pettingzoo: the adapters only call the env's methods.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters.base import check_action, check_same_spaces, check_seats, full_mask
from msagent.envs.multi_agent import Turn


class _PettingZooBase:
    """Seats, spaces and observation splitting shared by both adapters."""

    def __init__(self, env: Any, label: str = "", seat_spaces: bool = False) -> None:
        self.env = env
        self.seats: tuple[str, ...] = tuple(env.possible_agents)
        self.label = label or _label(env)
        self._index = {agent: i for i, agent in enumerate(self.seats)}
        spaces = [env.observation_space(agent) for agent in self.seats]
        self._dict_obs = isinstance(spaces[0], gym.spaces.Dict) and \
            "observation" in spaces[0].spaces
        self.observation_spaces = tuple(s["observation"] if self._dict_obs else s for s in spaces)
        self.observation_space = self.observation_spaces[0]
        self.action_spaces = tuple(env.action_space(agent) for agent in self.seats)
        self.action_space = self.action_spaces[0]
        if not seat_spaces:  # PadObservations and PadSeats ask for them as they are
            check_same_spaces(self.label, self.seats, self.action_spaces, "action")
            check_same_spaces(self.label, self.seats, self.observation_spaces, "observation")
        self._to_act: tuple[int, ...] = ()
        self._masks: dict[int, np.ndarray] | None = None

    def close(self) -> None:
        """Close the env."""
        self.env.close()

    def _split(self, raw: Any, info: Any) -> tuple[Any, np.ndarray | None]:
        """(observation, bool mask or None) of one agent's raw observation and info."""
        if self._dict_obs:
            mask = raw.get("action_mask")
            return raw["observation"], None if mask is None else mask.astype(bool)
        mask = info.get("action_mask") if isinstance(info, dict) else None
        return raw, None if mask is None else np.asarray(mask, dtype=bool)

    def _checked(self, actions: dict[int, Any]) -> dict[int, Any]:
        """Seat -> legal action in the env's form, refusing anything illegal first."""
        check_seats(self.label, self._to_act, actions, self.seats)
        masks = self._masks
        return {s: check_action(self.label, self.seats[s], actions[s],
                                None if masks is None else masks[s], self.action_spaces[s])
                for s in self._to_act}


class AECAdapter(_PettingZooBase):
    """A PettingZoo ``AECEnv`` as a turn-based game: ``to_act`` holds one seat.

    Every seat's rewards since the previous Turn are delivered once (the loser of the last
    move gets its -1 in the terminal Turn); dead agents are stepped with None inside.
    """

    def __init__(self, env: Any, label: str = "", seat_spaces: bool = False) -> None:
        super().__init__(env, label, seat_spaces)
        self._core = _state_holder(env)

    def reset(self, seed: int | None = None) -> Turn:
        """Reset the env; the first seat to move."""
        self.env.reset(seed=seed)
        self._pending = np.zeros(len(self.seats))
        self._collect()
        return self._advance()

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply the moving seat's action (refused before the env sees it when illegal)."""
        action = self._checked(actions)[self._to_act[0]]
        self.env.step(action)
        self._collect()
        return self._advance()

    def _collect(self) -> None:
        """Add the rewards of the env's last step to every seat's pending rewards."""
        index, pending = self._index, self._pending
        for agent, reward in self._core.rewards.items():
            if reward:
                pending[index[agent]] += reward

    def _advance(self) -> Turn:
        """Step dead agents with None until a live agent moves or the game is over."""
        env = self._core
        while env.agents:
            agent = env.agent_selection
            if not (env.terminations[agent] or env.truncations[agent]):
                return self._live_turn(agent)
            if all(env.terminations[a] or env.truncations[a] for a in env.agents):
                break
            self.env.step(None)
            self._collect()
        return self._end_turn()

    def _live_turn(self, agent: str) -> Turn:
        """The Turn of ``agent`` to move, with the rewards pending since the last Turn."""
        seat = self._index[agent]
        obs, mask = self._split(self.env.observe(agent), self._core.infos.get(agent))
        self._to_act = (seat,)
        self._masks = None if mask is None else {seat: mask}
        rewards, self._pending = self._pending, np.zeros(len(self.seats))
        return Turn(self._to_act, {seat: obs}, self._masks, rewards)

    def _end_turn(self) -> Turn:
        """The last Turn: the pending rewards; last observations when truncated."""
        env = self._core
        truncated = any(env.truncations[a] for a in env.agents)
        truncated = truncated and not all(env.terminations[a] for a in env.agents)
        final = ({self._index[a]: self._split(self.env.observe(a), None)[0] for a in env.agents}
                 if truncated else {})
        self._to_act, self._masks = (), None
        rewards, self._pending = self._pending, np.zeros(len(self.seats))
        return Turn((), {}, None, rewards, not truncated, truncated, final)


class ParallelAdapter(_PettingZooBase):
    """A PettingZoo ``ParallelEnv`` as a simultaneous game: every live seat acts each step."""

    def reset(self, seed: int | None = None) -> Turn:
        """Reset the env; every seat acts first."""
        observations, infos = self.env.reset(seed=seed)
        return self._turn(observations, infos, np.zeros(len(self.seats)), {}, {})

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply every live seat's action (all refused before the env sees any if one is
        illegal)."""
        named = {self.seats[s]: a for s, a in self._checked(actions).items()}
        observations, rewards, terms, truncs, infos = self.env.step(named)
        seat_rewards = np.zeros(len(self.seats))
        for agent, reward in rewards.items():
            seat_rewards[self._index[agent]] += reward
        return self._turn(observations, infos, seat_rewards, terms, truncs)

    def _turn(self, observations: dict[str, Any], infos: dict[str, Any], rewards: np.ndarray,
              terms: dict[str, bool], truncs: dict[str, bool]) -> Turn:
        """The next Turn: live agents act; the game is over when none is left."""
        live = [a for a in self.env.agents if not (terms.get(a) or truncs.get(a))]
        if not live:
            return self._end_turn(observations, rewards, terms, truncs)
        live.sort(key=self._index.__getitem__)
        obs, masks = {}, {}
        for agent in live:
            seat = self._index[agent]
            obs[seat], masks[seat] = self._split(observations[agent], infos.get(agent))
        self._to_act = tuple(self._index[a] for a in live)
        self._masks = self._every_seats(masks)
        return Turn(self._to_act, obs, self._masks, rewards)

    def _every_seats(self, masks: dict[int, np.ndarray | None]) -> dict[int, np.ndarray] | None:
        """A mask for every seat once any seat has one (all its Discrete or MultiDiscrete
        choices for the others), so that no seat's mask is dropped; None when no seat has one."""
        if all(m is None for m in masks.values()):
            return None
        full = {s: full_mask(self.action_spaces[s]) for s, m in masks.items() if m is None}
        if any(m is None for m in full.values()):
            return None  # a seat without a mask acts in a Box: Turn.masks cannot say so
        return {s: full[s] if m is None else m for s, m in masks.items()}

    def _end_turn(self, observations: dict[str, Any], rewards: np.ndarray,
                  terms: dict[str, bool], truncs: dict[str, bool]) -> Turn:
        """The last Turn; the truncated agents' last observations in ``final_obs``."""
        truncated = any(truncs.values()) and not all(terms.values())
        final = ({self._index[a]: self._split(o, None)[0] for a, o in observations.items()
                  if truncs.get(a)} if truncated else {})
        self._to_act, self._masks = (), None
        return Turn((), {}, None, rewards, not truncated, truncated, final)


def _state_holder(env: Any) -> Any:
    """The innermost env under PettingZoo's attribute-forwarding wrappers: it holds ``agents``,
    ``rewards``, ``terminations``... (reading them there skips a ``__getattr__`` per wrapper)."""
    from pettingzoo.utils.wrappers import BaseWrapper

    while isinstance(env, BaseWrapper):
        env = env.env
    return env


def _label(env: Any) -> str:
    """The env's ``metadata["name"]`` (``connect_four_v3``) or its class name."""
    metadata = getattr(env, "metadata", None) or {}
    return metadata.get("name") or type(getattr(env, "unwrapped", env)).__name__
