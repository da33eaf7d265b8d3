"""Image observations made small: grayscale and resize, for any game speaking the protocol.

Both keep the channels-last layout ``(H, W, C)`` msagent's CNN reads and the observation's
dtype. ``uint8`` frames go through Pillow (fast C loops); other dtypes through numpy.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from PIL import Image

from msagent.envs.wrappers.base import ObservationWrapper, image_space, positive
from msagent.errors import ConfigError, ScriptError

LUMA = np.array([0.299, 0.587, 0.114])
"""ITU-R 601-2 luma weights of R, G, B (what Pillow's ``convert("L")`` uses)."""

METHODS = {"area": Image.Resampling.BOX, "bilinear": Image.Resampling.BILINEAR,
           "nearest": Image.Resampling.NEAREST}
"""Resize filters by name; ``area`` averages the source pixels under each target pixel (as
OpenCV's ``INTER_AREA``, the usual choice to shrink Atari frames)."""


class Grayscale(ObservationWrapper):
    """RGB frames ``(H, W, 3)`` as one luma channel ``(H, W, 1)``: a third of the input to learn
    from, and colour rarely matters.

    Args:
        env: a game with Box observations of shape ``(H, W, 3)``.
    """

    def __init__(self, env: Any) -> None:
        """Check the frames are RGB; the space becomes ``(H, W, 1)`` of the same dtype."""
        super().__init__(env)
        space = image_space(self.observation_space, "Grayscale", self.label)
        if len(space.shape) != 3 or space.shape[2] != 3:
            raise ScriptError(f"Grayscale needs RGB frames (H, W, 3); the game {self.label} "
                              f"has observations of shape {space.shape}")
        low, high = _bound(space.low, np.min), _bound(space.high, np.max)
        self.observation_space = gym.spaces.Box(low, high, space.shape[:2] + (1,), space.dtype)
        self._uint8 = space.dtype == np.uint8

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The frame's luma channel, ``(H, W, 1)``."""
        if self._uint8:
            gray = np.asarray(Image.fromarray(np.ascontiguousarray(obs)).convert("L"))
        else:
            gray = (obs @ LUMA).astype(obs.dtype)
        return gray[:, :, None]


class Resize(ObservationWrapper):
    """Frames ``(H, W[, C])`` resized to ``(height, width, C)``: Atari's 210x160 screens down to
    84x84 make the CNN (and every fragment) several times cheaper.

    Args:
        env: a game with Box image observations ``(H, W)`` or ``(H, W, C)``.
        height: rows of the resized frame.
        width: columns of the resized frame.
        method: ``"area"`` (default), ``"bilinear"`` or ``"nearest"``.
    """

    def __init__(self, env: Any, height: int = 84, width: int = 84,
                 method: str = "area") -> None:
        """Check the frames and the method; the space becomes ``(height, width, C)``."""
        super().__init__(env)
        space = image_space(self.observation_space, "Resize", self.label)
        if method not in METHODS:
            raise ConfigError(f"Resize: unknown method {method!r}; choose from {sorted(METHODS)}")
        self.size = (positive(height, "height", "Resize"), positive(width, "width", "Resize"))
        self._filter = METHODS[method]
        channels = space.shape[2] if len(space.shape) == 3 else 1
        shape = self.size + (channels,)
        low, high = _bound(space.low, np.min), _bound(space.high, np.max)
        self.observation_space = gym.spaces.Box(low, high, shape, space.dtype)
        self._uint8 = space.dtype == np.uint8

    def observation(self, seat: int, obs: np.ndarray) -> np.ndarray:
        """The frame at ``(height, width, C)``, one Pillow resize per channel."""
        frame = obs if obs.ndim == 3 else obs[:, :, None]
        if frame.shape[:2] == self.size:
            return frame
        planes = [self._plane(frame[:, :, c]) for c in range(frame.shape[2])]
        return planes[0][:, :, None] if len(planes) == 1 else np.stack(planes, axis=2)

    def _plane(self, plane: np.ndarray) -> np.ndarray:
        """One channel resized (8-bit as is; other dtypes as 32-bit floats and back)."""
        height, width = self.size
        if self._uint8:
            image = Image.fromarray(np.ascontiguousarray(plane))
            return np.asarray(image.resize((width, height), self._filter))
        image = Image.fromarray(np.ascontiguousarray(plane, dtype=np.float32))
        return np.asarray(image.resize((width, height), self._filter)).astype(plane.dtype)


def _bound(values: np.ndarray, pick: Any) -> Any:
    """One scalar bound of a Box (its lowest low or highest high): a mapped image's pixels stay
    within the source's range, though no longer pixel by pixel."""
    return pick(values).item()
