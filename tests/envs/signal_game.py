"""A two-seat signalling game whose seats observe and act in different spaces, for PadSeats (and
an env script: ``make_env``). The speaker sees a target (one of 3) and says one of 3 words; then
the listener, seeing the word, picks one of 4 places. Both earn 1 when the place is the target:
random play earns 0.25, a shared language 1."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from pettingzoo.utils.env import ParallelEnv

from msagent.envs.wrappers import PadSeats


class Signal(ParallelEnv):
    """Two simultaneous steps: the speaker's word counts in the first, the listener's place in
    the second (each seat's other action is ignored)."""

    metadata = {"name": "signal_v0"}

    def __init__(self, listener_mask: bool = False) -> None:
        self.possible_agents = ["speaker", "listener"]
        self.listener_mask = listener_mask
        self._obs = {"speaker": gym.spaces.Box(0, 1, (3,), np.float32),
                     "listener": gym.spaces.Box(0, 1, (4,), np.float32)}
        self._act = {"speaker": gym.spaces.Discrete(3), "listener": gym.spaces.Discrete(4)}
        self.rng = np.random.default_rng()
        self.actions: list[dict[str, int]] = []

    def observation_space(self, agent: str) -> gym.Space:
        return self._obs[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._act[agent]

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.agents, self.t = list(self.possible_agents), 0
        self.target, self.word = int(self.rng.integers(3)), None
        return self._observe(), self._infos()

    def step(self, actions):
        self.actions.append(dict(actions))
        self.t += 1
        if self.t == 1:
            self.word = int(actions["speaker"])
            rewards = {a: 0.0 for a in self.agents}
        else:
            hit = float(int(actions["listener"]) == self.target)
            rewards = {a: hit for a in self.agents}
        over, agents = self.t >= 2, self.agents
        obs = self._observe()
        if over:
            self.agents = []
        return (obs, rewards, {a: over for a in agents}, {a: False for a in agents},
                self._infos(agents))

    def _observe(self) -> dict[str, np.ndarray]:
        """The speaker's one-hot target; the listener's one-hot word (none yet) and the time."""
        heard = np.zeros(4, np.float32)
        if self.word is not None:
            heard[self.word] = 1.0
        heard[3] = self.t
        return {"speaker": np.eye(3, dtype=np.float32)[self.target], "listener": heard}

    def _infos(self, agents=None) -> dict[str, dict]:
        """With ``listener_mask``: the listener may not pick place 0."""
        mask = {"action_mask": np.array([0, 1, 1, 1], np.int8)} if self.listener_mask else {}
        return {a: dict(mask) if a == "listener" else {} for a in agents or self.agents}


def make_env() -> PadSeats:
    """The signalling game with one observation and one action space for both seats."""
    return PadSeats(Signal())
