"""A football "bot" that hands its player to gfootball's built-in AI every step.

Needs the game made with ``builtin_ai = true`` in ``[env]`` (gfootball's ``v2`` action set,
whose action 19 is ``builtin_ai``); the learning players keep the 19 ordinary actions. With it,
the league's evaluator measures the main agent against the built-in AI as it trains.
"""

import numpy as np

BUILTIN_AI = 19


def act(observation: np.ndarray, action_mask: np.ndarray | None = None) -> int:
    """Always the built-in AI's own choice."""
    return BUILTIN_AI
