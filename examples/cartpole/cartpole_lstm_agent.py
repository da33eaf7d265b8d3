"""A recurrent agent: each of actor and critic is a 64-unit layer, a 64-unit LSTM and a head.

The env worker carries the LSTM state of each env from step to step; every fragment stores the
state of its first step, and the learner replays the fragment from it.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A 64-unit tanh encoder and a 64-unit LSTM core per tower."""
    return Policy(observation_space, action_space, NetworkConfig(hidden=(64,), lstm=64), seed=seed)
