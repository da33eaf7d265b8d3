"""The agent script of the OpenSpiel examples: an MLP over the information-state tensor."""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """Two 128-unit ReLU layers over the flat information-state tensor."""
    network = NetworkConfig(hidden=(128, 128), activation="relu")
    return Policy(observation_space, action_space, network, seed=seed)
