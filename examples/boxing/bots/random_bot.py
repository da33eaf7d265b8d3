"""A boxing bot that presses a uniformly random one of the 18 buttons each decision
(``seed(n)`` for repeats); it lands a few punches a round by chance."""

from __future__ import annotations

import numpy as np

ACTIONS = 18
"""boxing_v2's action space is Discrete(18); its games have no legal-action masks."""

_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)


def act(observation: np.ndarray, action_mask: np.ndarray | None) -> int:
    """A uniformly random action (a legal one, where a mask is given)."""
    if action_mask is None:
        return int(_rng.integers(ACTIONS))
    return int(_rng.choice(np.flatnonzero(action_mask)))
