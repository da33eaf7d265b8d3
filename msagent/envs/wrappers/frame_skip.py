"""Frame skipping: each decision is repeated for several emulator frames, so a policy decides
(and a learner learns) once per k frames; Atari's standard 4 makes training about 4x cheaper per
frame played, and lengthens what a discount of 0.99 looks ahead."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from msagent.envs.multi_agent import Turn, points
from msagent.envs.wrappers.base import Wrapper, positive


class FrameSkip(Wrapper):
    """Every ``step`` repeats the seats' actions up to ``skip`` times and sums their rewards
    (and the game's points, where an inner wrapper set ``Turn.score``).

    The repeating stops early when the game ends, when the seats to act change (a turn-based
    game), or when a repeated action becomes illegal under the new mask; the turn returned is
    the last one, its rewards those of every repeat. Put it innermost (right around the game),
    so image wrappers above it process only the frames a policy sees.

    With ``max_pool``, each seat's observation is the pixel-wise maximum of the last two frames
    played (as the Atari baselines do: some games draw a sprite only every other frame, and
    the last frame alone can miss it); the first frame of a decision of one frame is kept.

    Args:
        env: any game speaking the protocol (simultaneous games gain the most).
        skip: frames per decision.
        max_pool: observe the maximum of the last two frames instead of the last frame.
    """

    def __init__(self, env: Any, skip: int = 4, max_pool: bool = False) -> None:
        """Check ``skip``; spaces and seats are the game's."""
        super().__init__(env)
        self.skip = positive(skip, "skip", "FrameSkip")
        self.max_pool = bool(max_pool)

    def step(self, actions: dict[int, Any]) -> Turn:
        """Apply ``actions`` for up to ``skip`` frames; the last turn with the summed rewards."""
        turns = [self.env.step(actions)]
        while (len(turns) < self.skip and not turns[-1].done
               and _repeatable(turns[-1], actions)):
            turns.append(self.env.step(actions))
        shaped = any(t.score is not None for t in turns)
        turn = dataclasses.replace(turns[-1], rewards=sum(np.asarray(t.rewards, dtype=float)
                                                          for t in turns),
                                   score=sum(points(t) for t in turns) if shaped else None)
        return _pooled(turns[-2], turn) if self.max_pool and len(turns) > 1 else turn


def _pooled(previous: Turn, turn: Turn) -> Turn:
    """``turn`` with each seat's observation the maximum of its last two frames."""
    before = {**previous.obs, **previous.final_obs}
    obs = {s: _max(before.get(s), o) for s, o in turn.obs.items()}
    final = {s: _max(before.get(s), o) for s, o in turn.final_obs.items()}
    return dataclasses.replace(turn, obs=obs, final_obs=final)


def _max(before: Any, now: Any) -> Any:
    """The element-wise maximum of two frames of one shape, else the newer frame."""
    if before is None or np.shape(before) != np.shape(now):
        return now
    return np.maximum(before, now)


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
