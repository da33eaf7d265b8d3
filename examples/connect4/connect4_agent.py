"""The agent script of the Connect Four league: ``make_policy(obs_space, act_space, seed)``.

Observations are the (6, 7, 2) board planes PettingZoo gives the seat to act (its own pieces,
then the opponent's), so one network plays both seats; the legal-move mask comes separately.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """Two padded 3x3 convolutions (a small-grid CNN), then a 128-unit ReLU layer."""
    network = NetworkConfig(hidden=(128,), activation="relu", cnn_features=128)
    return Policy(observation_space, action_space, network, seed=seed)
