"""Random no-op starts: each game begins after a random number of do-nothing frames, so games
of a deterministic emulator (sticky actions off) do not all start from the same state; the
Atari baselines use up to 30."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from msagent.envs.multi_agent import Turn
from msagent.envs.wrappers.base import Wrapper, positive
from msagent.errors import ConfigError


class NoopStart(Wrapper):
    """``reset`` plays 1 to ``max_noops`` frames of ``noop_action`` for every seat to act first.

    Points scored during the no-ops are not rewards of the game that follows (its first turn
    reports none), as a game's first turn never does.

    The count is drawn from the wrapper's own generator, seeded by the first ``reset`` seed
    given. A game that ends during its no-ops is started again. Put it innermost (around the
    raw game), so the no-ops are emulator frames.

    Args:
        env: any game speaking the protocol.
        max_noops: most no-op frames at a game's start.
        noop_action: the action that does nothing (0 in every ALE game).
    """

    def __init__(self, env: Any, max_noops: int = 30, noop_action: int = 0) -> None:
        """Check the arguments; the generator is seeded at the first seeded reset."""
        super().__init__(env)
        self.max_noops = positive(max_noops, "max_noops", "NoopStart")
        if not self.action_space.contains(noop_action):
            raise ConfigError(f"NoopStart: noop_action {noop_action!r} is not an action of "
                              f"the game {self.label} ({self.action_space})")
        self.noop_action = noop_action
        self._rng = np.random.default_rng()

    def reset(self, seed: int | None = None) -> Turn:
        """Start a new game and play its no-op frames; the turn after them."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        turn = self.env.reset(seed=seed)
        for _ in range(int(self._rng.integers(1, self.max_noops + 1))):
            turn = self.env.step({seat: self.noop_action for seat in turn.to_act})
            if turn.done:
                turn = self.env.reset()
        return dataclasses.replace(turn, rewards=np.zeros(len(self.seats)), score=None)
