"""The agent script of the DQN example: a Q-network that acts epsilon-greedily.

The actor head of msagent's ``Policy`` is read as Q-values (``examples/algorithms/dqn.py``
trains it); ``act`` takes the greedy action, or with probability epsilon a random legal one.
Epsilon falls linearly from ``EPSILON_START`` to ``EPSILON_END`` over the first
``EPSILON_STEPS`` steps each acting process takes (each env worker counts its own).
"""

from __future__ import annotations

import numpy as np

from msagent.policy import ActOutput, NetworkConfig, Policy

EPSILON_START, EPSILON_END, EPSILON_STEPS = 1.0, 0.05, 40_000


class EpsilonGreedy(Policy):
    """A Q-network policy: greedy on the actor head, random with probability epsilon."""

    def __init__(self, observation_space, action_space, seed=None) -> None:
        super().__init__(observation_space, action_space,
                         NetworkConfig(hidden=(128, 128), activation="relu"), seed=seed)
        self.acted = 0
        self._rng = np.random.default_rng(seed)

    def epsilon(self) -> float:
        """The share of random actions now."""
        done = min(1.0, self.acted / EPSILON_STEPS)
        return EPSILON_START + done * (EPSILON_END - EPSILON_START)

    def act(self, obs, action_mask=None, deterministic=False, values=True, state=None):
        """The greedy action, or a random legal one with probability epsilon, and its
        log-probability under that mixture."""
        greedy = super().act(obs, action_mask, deterministic=True, values=values, state=state)
        if deterministic:
            return greedy
        n, eps = len(greedy.actions), self.epsilon()
        self.acted += n
        legal = (np.ones((n, self.action_spec.size), dtype=bool) if action_mask is None
                 else np.asarray(action_mask, dtype=bool))
        counts = legal.sum(1)
        random = self._rng.random(n) < eps
        picks = np.array([self._rng.choice(np.flatnonzero(row)) for row in legal])
        actions = np.where(random, picks, greedy.actions)
        chance = eps / counts + np.where(actions == greedy.actions, 1.0 - eps, 0.0)
        return ActOutput(actions, np.log(chance).astype(np.float32), greedy.values, greedy.state)


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """What the TOML's ``[scripts] agent`` asks of this file."""
    return EpsilonGreedy(observation_space, action_space, seed)
