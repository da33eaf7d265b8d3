"""What a policy's inputs and outputs look like: action specs, observation shapes, act output.

Pure numpy; the translation from gymnasium spaces is duck-typed, so nothing here imports
gymnasium.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from msagent.errors import ScriptError


@dataclass(frozen=True)
class ActionSpec:
    """What actions look like: ``size`` choices (discrete), a ``size``-d box (continuous), or
    several independent choices at once (multi-discrete, ``nvec``: one per component).

    Attributes:
        size: number of discrete actions, or dimension of continuous actions; for
            multi-discrete actions the sum of ``nvec`` (the width of the logits and masks).
        continuous: whether actions are real vectors.
        low: lower bounds of continuous actions (per dimension), or ``None``.
        high: upper bounds of continuous actions (per dimension), or ``None``.
        nvec: choices of each component of a multi-discrete action, or ``None``.
    """

    size: int
    continuous: bool = False
    low: tuple[float, ...] | None = None
    high: tuple[float, ...] | None = None
    nvec: tuple[int, ...] | None = None

    @classmethod
    def discrete(cls, n: int) -> ActionSpec:
        """Spec for ``n`` mutually exclusive actions."""
        return cls(size=int(n))

    @classmethod
    def box(cls, dim: int, low: Any = -1.0, high: Any = 1.0) -> ActionSpec:
        """Spec for ``dim``-d real actions within ``[low, high]`` (scalars broadcast)."""
        lo = np.broadcast_to(np.asarray(low, np.float64), (dim,))
        hi = np.broadcast_to(np.asarray(high, np.float64), (dim,))
        return cls(int(dim), True, tuple(map(float, lo)), tuple(map(float, hi)))

    @classmethod
    def multi_discrete(cls, nvec: Sequence[int]) -> ActionSpec:
        """Spec for one independent choice among ``nvec[i]`` per component ``i``."""
        nvec = tuple(int(n) for n in nvec)
        if not nvec or min(nvec) < 1:
            raise ScriptError(f"a multi-discrete action needs at least one component and at "
                              f"least one choice per component, not nvec={list(nvec)}")
        return cls(size=sum(nvec), nvec=nvec)

    @property
    def multi(self) -> bool:
        """Whether actions are multi-discrete (an integer per component)."""
        return self.nvec is not None

    @classmethod
    def from_space(cls, space: Any) -> ActionSpec:
        """Translate a gymnasium ``Discrete``, 1-d ``MultiDiscrete`` (or ``MultiBinary``: n
        choices of 2) or 1-d ``Box`` space (duck-typed, no import).

        Raises:
            ScriptError: any other space (2-d MultiDiscrete or Box, Dict...), or a Discrete or
                MultiDiscrete space not starting at 0.
        """
        shape = getattr(space, "shape", None)
        if hasattr(space, "n") and shape == ():
            _starts_at_zero(space, "Discrete")
            return cls.discrete(int(space.n))
        if hasattr(space, "nvec") and shape is not None and len(shape) == 1:
            _starts_at_zero(space, "MultiDiscrete")
            return cls.multi_discrete(space.nvec)
        if type(space).__name__ == "MultiBinary" and shape is not None and len(shape) == 1:
            return cls.multi_discrete((2,) * shape[0])  # n yes/no choices
        if hasattr(space, "low") and shape is not None and len(shape) == 1:
            return cls.box(shape[0], space.low, space.high)
        raise ScriptError(f"unsupported action space {space!r}: msagent policies act in a "
                          "Discrete(n) space, a 1-d MultiDiscrete space (both starting at 0), a "
                          "1-d MultiBinary space or a 1-d Box space; wrap the env (in make_env) "
                          "so that its action_space is one of these")


def _starts_at_zero(space: Any, kind: str) -> None:
    """Refuse an integer action space whose choices do not start at 0."""
    if np.any(np.asarray(getattr(space, "start", 0)) != 0):
        raise ScriptError(f"unsupported action space {space!r}: a {kind} action space must "
                          "start at 0 (msagent policies choose actions 0..n-1)")


_WRAP = ("msagent.envs.wrappers.Flatten(env) in make_env (any game; "
         "gymnasium.wrappers.FlattenObservation does it for a one-seat Gymnasium env)")
ONE_HOT_HINT = (f"encode it one-hot: return {_WRAP} (Discrete(n) becomes a one-hot Box of "
                "shape (n,))")
FLATTEN_HINT = f"flatten it: return {_WRAP}"
SHAPE_HINT = ("msagent policies take 1-d observations (MLP) or 3-d images [H, W, C] (CNN); "
              f"add a channel axis to 2-d images, flatten other shapes: return {_WRAP}")


def box_shape(space: Any) -> tuple[int, ...]:
    """The shape of a Box space (or a plain shape), any number of dimensions."""
    if isinstance(space, Sequence):
        return tuple(int(d) for d in space)
    if hasattr(space, "low") and getattr(space, "shape", None) is not None:
        return tuple(int(d) for d in space.shape)
    return observation_shape(space)  # raises the error that names the space


def observation_shape(space: Any) -> tuple[int, ...]:
    """The observation shape a policy is built for, from a Box space or a plain shape.

    Raises:
        ScriptError: a space other than Box (Dict, Tuple, Discrete...), or a shape that is
            neither 1-d nor 3-d, naming the space and how to convert it.
    """
    if isinstance(space, Sequence) and all(isinstance(d, (int, np.integer)) for d in space):
        shape, name = tuple(int(d) for d in space), f"shape {tuple(space)}"
    elif hasattr(space, "low") and getattr(space, "shape", None) is not None:
        shape, name = tuple(int(d) for d in space.shape), f"space {space!r}"
    else:
        is_discrete = hasattr(space, "n") and getattr(space, "shape", None) == ()
        hint = ONE_HOT_HINT if is_discrete else FLATTEN_HINT
        raise ScriptError(f"unsupported observation space {space!r}: msagent policies take a "
                          f"Box observation space; {hint}")
    if len(shape) not in (1, 3):
        raise ScriptError(f"unsupported observation {name}: {SHAPE_HINT}")
    return shape


class ActOutput(NamedTuple):
    """What ``Policy.act`` returns, each batched over the leading axis.

    Attributes:
        actions: sampled (or greedy) actions; raw Gaussian samples for continuous actions.
        logp: log-probability of ``actions`` under the acting policy (float32).
        values: state values V(obs) (float32).
        state: the next recurrent state ``[N, state_size]`` of a recurrent policy (float32),
            None for a feed-forward one.
    """

    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    state: np.ndarray | None = None

    def rows(self, start: int, stop: int) -> ActOutput:
        """Rows ``start:stop`` of every field (what one request of a batch gets back)."""
        return ActOutput(*(None if f is None else f[start:stop] for f in self))
