"""The environment script of the tic-tac-toe example: PettingZoo's tictactoe_v3 (AEC)."""

from pettingzoo.classic import tictactoe_v3


def make_env():
    """One tic-tac-toe game (two seats, turn-based, observations with action masks)."""
    return tictactoe_v3.env()
