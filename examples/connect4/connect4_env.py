"""The environment script of the connect-four example: PettingZoo's connect_four_v3 (AEC)."""

from pettingzoo.classic import connect_four_v3


def make_env():
    """One connect-four game (two seats, turn-based, observations with action masks)."""
    return connect_four_v3.env()
