"""CartPole with its velocities hidden: the observation is (cart position, pole angle) only.

Balancing needs the velocities, which a policy must infer from how the positions change: a
memory task that a feed-forward policy fails and a recurrent one (``cartpole_lstm_agent.py``)
solves.
"""

import gymnasium as gym
import numpy as np

VISIBLE = (0, 2)
"""Cart position and pole angle; cart velocity (1) and pole angular velocity (3) are hidden."""


def make_env(id: str = "CartPole-v1") -> gym.Env:  # noqa: A002 - the TOML key is "id"
    """One CartPole whose observations keep only positions."""
    env = gym.make(id)
    low, high = env.observation_space.low[list(VISIBLE)], env.observation_space.high[list(VISIBLE)]
    space = gym.spaces.Box(low, high, dtype=np.float32)
    return gym.wrappers.TransformObservation(env, lambda obs: obs[list(VISIBLE)], space)
