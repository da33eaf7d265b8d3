"""The agent script of the boxing league: ``make_policy(obs_space, act_space, seed)``.

Observations are ``(84, 84, 5)`` ``uint8``: 4 stacked grayscale frames and the seat plane
(``boxing_env.py``), so one network boxes from either corner; 18 actions, no masks.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A CNN into 512 ReLU features shared by the actor and the critic head (one CNN per step
    instead of two): on 84x84 frames the Nature-DQN convolutions (8x8/4, 4x4/2, 3x3/1) the
    Atari PPO baselines use; on smaller frames (``env.size = 42``) four 3x3/2 convolutions,
    since Nature's stack would end on a 1x1 map there."""
    cnn = "nature" if observation_space.shape[0] >= 84 else "strided"
    network = NetworkConfig(activation="relu", cnn_features=512, shared=True, cnn=cnn)
    return Policy(observation_space, action_space, network, seed=seed)
