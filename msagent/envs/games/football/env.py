"""``FootballEnv``: Google Research Football as a simultaneous msagent game.

gfootball lives in its own virtual environment (``scripts/setup_football.sh``), so the game
runs in a child process (``server.py``) spoken to over msgpack frames. Every controlled player
is a seat (``left_0``, ..., ``right_0``, ...) acting every step with one of gfootball's 19
actions; players not controlled are played by gfootball's built-in AI.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.adapters.base import check_action, check_seats
from msagent.envs.games.football.child import FootballChild, football_python
from msagent.envs.multi_agent import Turn
from msagent.errors import ConfigError

ACTIONS = 19
"""gfootball's default action set: idle, 8 directions, passes, shot, sprint, ..."""
BUILTIN_AI = 19
"""With ``builtin_ai=True``: the action that hands the player to gfootball's built-in AI for
the step (gfootball's ``v2`` action set). Outside the policies' ``Discrete(19)``: for bots, such
as ``examples/football/bots/builtin_ai_bot.py``, to measure agents against the built-in AI."""
REPRESENTATIONS = {
    "simple115v2": gym.spaces.Box(-np.inf, np.inf, (115,), np.float32),
    "simple115": gym.spaces.Box(-np.inf, np.inf, (115,), np.float32),
    "extracted": gym.spaces.Box(0, 255, (72, 96, 4), np.uint8),
}
"""Observation space of each supported representation (``extracted`` is the super minimap)."""
REWARDS = ("scoring", "scoring,checkpoints")


class FootballEnv:
    """A gfootball scenario with ``left_players`` + ``right_players`` controlled seats.

    Attributes:
        seats: ``left_0..`` then ``right_0..``.
        teams: Side of each seat (0 left, 1 right; 0 when only the right side has seats).
        restarts: How many times a dead child was replaced on ``reset``.
    """

    def __init__(self, scenario: str = "academy_empty_goal_close",
                 representation: str = "simple115v2", rewards: str = "scoring",
                 left_players: int = 1, right_players: int = 0,
                 python: str | os.PathLike | None = None, timeout_s: float = 60.0,
                 options: dict[str, Any] | None = None, builtin_ai: bool = False) -> None:
        """Start the child and create the scenario (errors surface here, not in training)."""
        if representation not in REPRESENTATIONS:
            raise ConfigError(f"unknown football representation {representation!r}; choose "
                              f"from {sorted(REPRESENTATIONS)}")
        if rewards not in REWARDS:
            raise ConfigError(f"unknown football rewards {rewards!r}; choose from {REWARDS}")
        if min(left_players, right_players) < 0 or left_players + right_players < 1:
            raise ConfigError(f"football needs at least one controlled player and no negative "
                              f"count, got left_players={left_players}, "
                              f"right_players={right_players}")
        self.python = football_python(python)
        self.scenario, self.timeout_s = scenario, timeout_s
        self.label = f"football:{scenario}"
        self._make = {"cmd": "make", "scenario": scenario, "representation": representation,
                      "rewards": rewards, "left": int(left_players),
                      "right": int(right_players), "options": dict(options or {})}
        if builtin_ai:
            self._make["options"]["action_set"] = "v2"
        self._actions = ACTIONS + 1 if builtin_ai else ACTIONS
        self.seats = tuple(f"left_{i}" for i in range(left_players)) + tuple(
            f"right_{i}" for i in range(right_players))
        # sides numbered from 0 among those with seats (right alone is side 0)
        self.teams = (0,) * left_players + (1 if left_players else 0,) * right_players
        self.observation_space = REPRESENTATIONS[representation]
        self.action_space = gym.spaces.Discrete(ACTIONS)
        self.restarts = 0
        self._to_act = tuple(range(len(self.seats)))
        self._child: FootballChild | None = None
        self._start()

    @property
    def pid(self) -> int | None:
        """The child process's id (None once closed)."""
        return None if self._child is None else self._child.pid

    def _start(self) -> None:
        """Start a child and create the scenario in it."""
        child = FootballChild(self.python, self.timeout_s)
        try:
            child.request(self._make, "make", timeout_s=max(self.timeout_s, 120.0))
        except BaseException:
            child.kill()
            raise
        self._child = child

    def reset(self, seed: int | None = None) -> Turn:
        """Start an episode; a dead child is replaced first."""
        if self._child is None or not self._child.alive:
            if self._child is not None:
                self._child.kill()
                self.restarts += 1
            self._child = None
            self._start()
        reply = self._request({"cmd": "reset", "seed": seed}, "reset")
        return Turn(self._to_act, self._obs(reply["obs"]), None, np.zeros(len(self.seats)))

    def step(self, actions: dict[int, Any]) -> Turn:
        """Every seat's action; the next turn (no seat to act once the episode ended)."""
        if len(actions) != len(self._to_act) or any(s not in actions for s in self._to_act):
            check_seats(self.label, self._to_act, actions, self.seats)
        moves = []
        for seat in self._to_act:
            action = actions[seat]
            if not isinstance(action, (int, np.integer)) or not 0 <= action < self._actions:
                action = check_action(self.label, self.seats[seat], action, None,
                                      self.action_space)
            moves.append(int(action))
        if self._child is None:
            raise RuntimeError(f"{self.label}: step before reset (or after close)")
        reply = self._request({"cmd": "step", "actions": moves}, "step")
        rewards = np.asarray(reply["rewards"], dtype=np.float64)
        obs = self._obs(reply["obs"])
        if reply["done"]:
            truncated = bool(reply["truncated"])
            return Turn((), {}, None, rewards, not truncated, truncated,
                        obs if truncated else {})
        return Turn(self._to_act, obs, None, rewards)

    def _request(self, message: dict, what: str) -> dict:
        """One request to the child (a dead child stays dead until the next reset)."""
        return self._child.request(message, what)

    def _obs(self, stacked: np.ndarray) -> dict[int, np.ndarray]:
        """Seat -> observation, in the declared dtype."""
        array = np.asarray(stacked, dtype=self.observation_space.dtype)
        return {seat: array[seat] for seat in self._to_act}

    def close(self) -> None:
        """Kill the child process."""
        if self._child is not None:
            self._child.kill()
            self._child = None

    def __del__(self) -> None:
        """Do not leave a child behind."""
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
