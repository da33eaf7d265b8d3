"""The agent script of the boxing league: ``make_policy(obs_space, act_space, seed)``.

Observations are ``(84, 84, 5)`` ``uint8``: 4 stacked grayscale frames and the seat plane
(``boxing_env.py``), so one network boxes from either corner; 18 actions, no masks.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """The Nature-DQN CNN (8x8/4, 4x4/2, 3x3/1 convolutions) into 512 ReLU features, as the
    Atari PPO baselines use, shared by the actor and the critic head: one CNN per step instead
    of two. On 42x42 frames (``env.size = 42``) Nature's stack ends on a 1x1 map;
    ``cnn="strided"`` keeps a 3x3 one, at half the steps per second here, and did not learn
    faster in 13 minutes of single-player Boxing (docs/games/boxing.md)."""
    network = NetworkConfig(activation="relu", cnn_features=512, shared=True, cnn="nature")
    return Policy(observation_space, action_space, network, seed=seed)
