"""Frame skipping: each decision is repeated for several emulator frames, so a policy decides
(and a learner learns) once per k frames; Atari's standard 4 makes training about 4x cheaper per
frame played, and lengthens what a discount of 0.99 looks ahead."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from msagent.envs.multi_agent import Turn
from msagent.envs.wrappers.base import Wrapper, positive


class FrameSkip(Wrapper):
    """Every ``step`` repeats the seats' actions up to ``skip`` times and sums their rewards.

    The repeating stops early when the game ends, when the seats to act change (a turn-based
    game), or when a repeated action becomes illegal under the new mask; the turn returned is
    the last one, its rewards those of every repeat. Put it innermost (right around the game),
    so image wrappers above it process only the frames a policy sees.

    Args:
        env: any game speaking the protocol (simultaneous games gain the most).
        skip: frames per decision.
    """

    def __init__(self, env: Any, skip: int = 4) -> None:
        """Check ``skip``; spaces and seats are the game's."""
        super().__init__(env)
        self.skip = positive(skip, "skip", "FrameSkip")

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply ``actions`` for up to ``skip`` frames; the last turn with the summed rewards."""
        turn = self.env.step(actions)
        rewards = np.array(turn.rewards, dtype=float)
        for _ in range(self.skip - 1):
            if turn.done or not _repeatable(turn, actions):
                break
            turn = self.env.step(actions)
            rewards += turn.rewards
        return dataclasses.replace(turn, rewards=rewards)


def _repeatable(turn: Turn, actions: dict[int, Any]) -> bool:
    """Whether the same seats act again and each action is still legal."""
    if set(turn.to_act) != set(actions):
        return False
    if turn.masks is None:
        return True
    return all(_legal(turn.masks[s], a) for s, a in actions.items())


def _legal(mask: np.ndarray, action: Any) -> bool:
    """Whether an integer action is allowed by a bool mask (other actions: no masks apply)."""
    try:
        index = int(action)
    except (TypeError, ValueError):
        return False
    return 0 <= index < mask.shape[0] and bool(mask[index])
