"""A greedy connect-four bot: win if it can, else random (the lookahead bot without blocking).

The Connect Four league's main agent trains against it (``[league.roles.main] bot_opponents``):
it takes every immediate win it is offered, so a main agent that fails to block, or drops a
piece under the opponent's winning square, loses at once, a lesson that a league of equally
young networks, which overlook the same wins, rarely teaches. It never blocks, so it is
weaker than the one-step-lookahead bot the evaluator measures the main agent against.
"""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("_connect4_greedy_lookahead",
                                               Path(__file__).with_name("lookahead_bot.py"))
_lookahead = importlib.util.module_from_spec(_spec)  # a module of its own: its own RNG
_spec.loader.exec_module(_lookahead)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    _lookahead.seed(n)


def act(observation, action_mask) -> int:
    """A winning column, else a random legal one."""
    return _lookahead.act(observation, action_mask, block=False)
