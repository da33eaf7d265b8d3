"""The agent script of the FightingICE league: ``make_policy(obs_space, act_space, seed)``.

Observations are the seat's own feature vector (its fighter first, P2 mirrored), so one
network plays both seats; the ground/air action mask comes separately.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A 256x256 tanh MLP over the features."""
    network = NetworkConfig(hidden=(256, 256), activation="tanh")
    return Policy(observation_space, action_space, network, seed=seed)
