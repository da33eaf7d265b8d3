"""An MLP agent for the Connect Four league (``--set scripts.agent=connect4/connect4_agent.py``).

Observations are the (6, 7, 2) board planes PettingZoo gives the seat to act (its own pieces,
then the opponent's), so one network plays both seats; the legal-move mask comes separately.
"""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """A 256x256 ReLU MLP over the flattened planes (on a CPU, far cheaper than a CNN)."""
    network = NetworkConfig(hidden=(256, 256), activation="relu", flatten=True)
    return Policy(observation_space, action_space, network, seed=seed)
