"""The agent script of the tic-tac-toe league: ``make_policy(obs_space, act_space, seed)``."""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A small-grid CNN over the (3, 3, 2) board planes, then a 64-unit ReLU layer."""
    network = NetworkConfig(hidden=(64,), activation="relu", cnn_features=64)
    return Policy(observation_space, action_space, network, seed=seed)
