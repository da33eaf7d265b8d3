"""A seat indicator plane: one network plays every seat of a game, and where every seat sees the
same screen (two-player Atari) it cannot otherwise tell which player it controls."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from msagent.envs.wrappers.base import ObservationWrapper, image_space


class SeatIndicator(ObservationWrapper):
    """Appends one constant channel to each seat's image: seat ``i`` of ``S`` fills it with
    ``i / (S - 1)`` of the space's top value (0 and 255 for two seats of ``uint8`` frames).

    ``(H, W, C)`` becomes ``(H, W, C + 1)`` of the same dtype (``(H, W)`` becomes
    ``(H, W, 2)``). Put it after frame stacking, so the stack holds frames only.

    Args:
        env: a game with Box image observations.
    """

    seat_independent = False

    def __init__(self, env: Any) -> None:
        """Check the frames; one channel more, bounded by the frames' own range."""
        super().__init__(env)
        space = image_space(self.observation_space, "SeatIndicator", self.label)
        top = 255 if space.dtype == np.uint8 else 1
        low, high = _channels(space.low), _channels(space.high)
        shape = low.shape[:2] + (1,)
        low = np.concatenate([low, np.zeros(shape, space.dtype)], axis=2)
        high = np.concatenate([high, np.full(shape, top, space.dtype)], axis=2)
        self.observation_space = gym.spaces.Box(low, high, dtype=space.dtype)
        last = max(len(self.seats) - 1, 1)
        self._planes = [np.full(shape, top * seat / last, space.dtype)
                        for seat in range(len(self.seats))]

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The image with the seat's constant plane appended (copied channel by channel: numpy
        joins one-channel pieces 2-4x faster than multi-channel ones)."""
        image = _channels(obs)
        planes = [image[:, :, c:c + 1] for c in range(image.shape[2])]
        return np.concatenate(planes + [self._planes[seat]], axis=2)


def _channels(image: np.ndarray) -> np.ndarray:
    """An image as ``(H, W, C)`` (a 2-d one gets a channel axis)."""
    image = np.asarray(image)
    return image if image.ndim == 3 else image[:, :, None]
