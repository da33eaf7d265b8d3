"""A FightingICE bot that plays a uniformly random legal action (``seed(n)`` for repeats)."""

import numpy as np

_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)


def act(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """A uniformly random legal action."""
    return int(_rng.choice(np.flatnonzero(action_mask)))
