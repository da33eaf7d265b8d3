"""The agent script of the CartPole example: ``make_policy(obs_space, act_space, seed)``."""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A 64x64 tanh actor-critic MLP (separate actor and critic)."""
    return Policy(observation_space, action_space, NetworkConfig(), seed=seed)
