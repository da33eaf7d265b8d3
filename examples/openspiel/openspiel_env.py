"""The environment script of the OpenSpiel example: any OpenSpiel game by name."""

import pyspiel

from msagent.envs.adapters.openspiel import OpenSpielAdapter


def make_env(game: str = "tic_tac_toe", privileged: bool = False):
    """The OpenSpiel game ``game`` (e.g. ``tic_tac_toe``, ``kuhn_poker``, ``goofspiel``);
    ``privileged``: each seat also observes the other seats' information states, for the
    critic only (play it with ``openspiel_privileged_agent.py``)."""
    loaded = pyspiel.load_game(game)
    return OpenSpielAdapter(loaded, privileged=True) if privileged else loaded
