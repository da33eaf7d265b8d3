"""The environment script of the OpenSpiel example: any OpenSpiel game by name."""

import pyspiel


def make_env(game: str = "tic_tac_toe"):
    """The OpenSpiel game ``game`` (e.g. ``tic_tac_toe``, ``kuhn_poker``, ``goofspiel``)."""
    return pyspiel.load_game(game)
