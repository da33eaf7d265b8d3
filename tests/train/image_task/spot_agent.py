"""The spot game's agent: the default CNN for 42x42 frames (Nature's), one torso under both heads."""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A CNN policy on the (42, 42, 4) frame stack."""
    return Policy(observation_space, action_space,
                  NetworkConfig(activation="relu", cnn_features=128, shared=True), seed=seed)
