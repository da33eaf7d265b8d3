"""An agent script for ``make_env(privileged=True)``: the actor reads the seat's own
information-state tensor, the critic also the other seats' (a centralised critic)."""

from msagent.policy import NetworkConfig, Policy

PLAYERS = 2
"""Seats of the game: the observation is this many information-state tensors end to end."""


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """Two 256-unit ReLU layers per tower; the actor over the seat's own tensor only."""
    own = observation_space.shape[0] // PLAYERS
    network = NetworkConfig(hidden=(256, 256), activation="relu", actor_inputs=own)
    return Policy(observation_space, action_space, network, seed=seed)
