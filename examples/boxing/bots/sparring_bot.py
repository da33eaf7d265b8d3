"""A boxing sparring partner: the attacker's moves, with a random button instead in a share of
its decisions (``RANDOM_SHARE``).

The attacker (``attacker_bot.py``) beats the random bot by 64-73 points a round, so a league's
main agent that trains against it is hit far more often than it hits. Single-player Boxing's
computer boxer, against which PPO does learn, is much weaker: the random agent draws level
with it. This bot is meant to sit in between: it comes close, as the attacker does, and can be
hit, as the game's boxer can. With ``RANDOM_SHARE = 0.8`` it beat the random bot by -34, +6, +22
and +42 points in four full rounds (seats alternating): about level, with a wide spread (0.5:
+96 and +106; 0.9: -20 to +34), measured when it still drew its random buttons from its own
generator rather than the random bot's (the same mix, other draws).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from msagent.user_scripts import load_script

RANDOM_SHARE = 0.8
"""The share of decisions on which the bot presses a random button instead of the attacker's."""

_attacker = load_script(str(Path(__file__).with_name("attacker_bot.py")))
_random = load_script(str(Path(__file__).with_name("random_bot.py")))
_rng = np.random.default_rng(0)


def seed(n: int) -> None:
    """Restart the bot's random numbers (its coin and its random buttons) from seed ``n``."""
    global _rng
    _rng = np.random.default_rng(n)
    _random.seed(n)


def act(observation: np.ndarray, action_mask: np.ndarray | None) -> int:
    """The random bot's button in ``RANDOM_SHARE`` of decisions, else the attacker's choice."""
    if _rng.random() < RANDOM_SHARE:
        return _random.act(observation, action_mask)
    return _attacker.act(observation, action_mask)
