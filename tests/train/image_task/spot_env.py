"""A test game for the image path: press the button of the quadrant a bright square is in.

Each decision shows a fresh 42x42 grayscale frame with a 6x6 white square in one of four
quadrants, drawn at random; pressing that quadrant's button (0-3) scores 1, any other 0. The
frames are stacked 4 deep by msagent's ``FrameStack``, so the three older frames show earlier
squares: only a policy that reads the newest frame, and whose stored observation is the one it
acted on, beats the 0.25 per decision of a policy that ignores the screen.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.wrappers import FrameStack

SIZE, SPOT, LENGTH = 42, 6, 32
CORNERS = ((6, 6), (6, 28), (28, 6), (28, 28))
"""Top-left pixel of the square in each quadrant: top left, top right, bottom left, bottom right."""


class SpotEnv(gym.Env):
    """One seat; ``LENGTH`` decisions per episode, each rewarded on its own frame."""

    observation_space = gym.spaces.Box(0, 255, (SIZE, SIZE, 1), np.uint8)
    action_space = gym.spaces.Discrete(len(CORNERS))

    def reset(self, *, seed: int | None = None, options: Any = None):
        """A new episode: the first frame."""
        super().reset(seed=seed)
        self._t = 0
        return self._frame(), {}

    def step(self, action: int):
        """Score the press against the current frame, then show the next one."""
        reward = float(int(action) == self._quadrant)
        self._t += 1
        return self._frame(), reward, False, self._t >= LENGTH, {}

    def _frame(self) -> np.ndarray:
        """A gray frame with the square in a random quadrant (remembered for scoring)."""
        self._quadrant = int(self.np_random.integers(len(CORNERS)))
        frame = np.full((SIZE, SIZE, 1), 60, np.uint8)
        row, col = CORNERS[self._quadrant]
        frame[row:row + SPOT, col:col + SPOT] = 255
        return frame


def make_env() -> Any:
    """The spot game with 4 stacked frames."""
    return FrameStack(SpotEnv(), 4)
