"""A convolutional agent for the Connect Four league (``--set scripts.agent=...`` to use it).

Two padded 3x3 convolutions see the (6, 7, 2) board planes, so a pattern (three in a row, a
threat to block) is recognised wherever it is; costlier per step on a CPU than the MLP.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A small-grid CNN (32 and 64 channels), 128 features, one 128-unit ReLU layer."""
    network = NetworkConfig(hidden=(128,), activation="relu", cnn_features=128)
    return Policy(observation_space, action_space, network, seed=seed)
