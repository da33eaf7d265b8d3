"""Another network for the tic-tac-toe league, for a player of its own (``[[league.players]]
agent = "tictactoe/tictactoe_mlp_agent.py"``): a plain MLP over the flattened board planes,
no CNN."""

from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None) -> Policy:
    """Two 64-unit tanh layers over the 18 board-plane inputs."""
    network = NetworkConfig(hidden=(64, 64), flatten=True)
    return Policy(observation_space, action_space, network, seed=seed)
