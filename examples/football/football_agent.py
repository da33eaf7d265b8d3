"""The agent script of the football examples: ``make_policy(obs_space, act_space, seed)``.

``simple115v2`` observations (115 floats) go to a 256x256 ReLU MLP; ``extracted`` super-minimap
planes (72x96x4 uint8) to the small Atari-style CNN first.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """An MLP for vector observations, a CNN + MLP for the super minimap."""
    if len(observation_space.shape) == 3:
        network = NetworkConfig(hidden=(256,), activation="relu", cnn_features=256)
    else:
        network = NetworkConfig(hidden=(256, 256), activation="relu")
    return Policy(observation_space, action_space, network, seed=seed)
