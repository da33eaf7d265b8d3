"""A two-seat game with MultiDiscrete actions and masks (and an env script: ``make_env``).

Each of 8 rounds, every seat sees its own target, a colour (one of 3) and a size (one of 2), and
answers with both at once: ``MultiDiscrete([3, 2])``. One wrong colour is masked off each round
(its slice of the ``[3 + 2]`` mask). A seat scores a point for each answer that matches both
its target's parts, and is rewarded its points minus the other seat's (zero-sum): random play
matches 1/2 * 1/2 = 1/4 of the time (1/3 with the mask's help), a perfect seat every time.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from pettingzoo.utils.env import ParallelEnv

ROUNDS = 8
NVEC = (3, 2)


class TwinTarget(ParallelEnv):
    """Simultaneous rounds; observations are the two one-hot target parts (5 floats)."""

    metadata = {"name": "twin_target_v0"}

    def __init__(self, masks: bool = True) -> None:
        self.possible_agents = ["player_0", "player_1"]
        self.masks = masks
        self._obs_space = gym.spaces.Box(0, 1, (sum(NVEC),), np.float32)
        self._act_space = gym.spaces.MultiDiscrete(NVEC)
        self.rng = np.random.default_rng()
        self.actions: list[dict[str, np.ndarray]] = []

    def observation_space(self, agent: str) -> gym.Space:
        return self._obs_space

    def action_space(self, agent: str) -> gym.Space:
        return self._act_space

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.agents, self.t = list(self.possible_agents), 0
        self._draw()
        return self._observe(), self._infos()

    def step(self, actions):
        self.actions.append(dict(actions))
        hits = {a: float(np.array_equal(np.asarray(actions[a]), self.targets[a]))
                for a in self.agents}
        one, two = self.agents
        rewards = {one: hits[one] - hits[two], two: hits[two] - hits[one]}
        self.t += 1
        over, agents = self.t >= ROUNDS, self.agents
        self._draw()
        if over:
            self.agents = []
        return (self._observe(agents), rewards, {a: over for a in agents},
                {a: False for a in agents}, self._infos(agents))

    def _draw(self) -> None:
        """New targets, and the colour each seat may not answer (never its target's)."""
        self.targets = {a: np.array([self.rng.integers(3), self.rng.integers(2)])
                        for a in self.possible_agents}
        self.banned = {a: int((t[0] + 1 + self.rng.integers(2)) % 3)
                       for a, t in self.targets.items()}

    def _observe(self, agents=None) -> dict[str, np.ndarray]:
        """Each seat's one-hot colour and size."""
        out = {}
        for a in agents or self.agents:
            obs = np.zeros(sum(NVEC), np.float32)
            obs[self.targets[a][0]] = obs[3 + self.targets[a][1]] = 1.0
            out[a] = obs
        return out

    def _infos(self, agents=None) -> dict[str, dict]:
        """Each seat's ``[3 + 2]`` mask: every size, every colour but the banned one."""
        if not self.masks:
            return {a: {} for a in agents or self.agents}
        infos = {}
        for a in agents or self.agents:
            mask = np.ones(sum(NVEC), np.int8)
            mask[self.banned[a]] = 0
            infos[a] = {"action_mask": mask}
        return infos


def make_env():
    """The game as an env script gives it."""
    return TwinTarget()
