"""A football bot that plays one of gfootball's 19 actions uniformly at random."""

import numpy as np

_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)


def act(observation: np.ndarray, action_mask: np.ndarray | None = None) -> int:
    """A uniformly random action (football has no illegal actions)."""
    return int(_rng.integers(19))
