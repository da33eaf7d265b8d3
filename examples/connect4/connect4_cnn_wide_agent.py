"""The Connect Four league's CNN (``connect4_cnn_agent.py``) with 256 features instead of 128.

The same two padded 3x3 convolutions (32 and 64 channels) over the board planes, flattened into
256 ReLU features under the actor and the critic head (``shared=True``). With the landing plane
(``[env] landing_plane = true``, threat planes off) and the evaluator playing the mean of main's
newest 8 snapshots (``[services.evaluator] average_snapshots = 8``) it was the best Connect
Four league without threat planes (README, "Connect Four league"): with seed 0, 90 % against
the lookahead bot from both seats after 16.4 minutes and about 91 % from the second seat over
the last ten; seeds 1 and 2 touched 90 % (24.1 and 24.6 minutes) without holding it (86.5 and
88 % from the second seat). With the threat planes the example's 128 features are enough.
Use it with ``--set scripts.agent=connect4/connect4_cnn_wide_agent.py``.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A small-grid CNN (32 and 64 channels) into 256 ReLU features under both heads."""
    network = NetworkConfig(activation="relu", cnn_features=256, shared=True)
    return Policy(observation_space, action_space, network, seed=seed)
