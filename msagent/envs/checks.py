"""Cheap checks that what an environment returns matches its declared observation space.

One vectorized numpy check per batch (shape, dtype kind, ``np.isfinite(...).all()``, integer
bounds of discrete spaces); the details (which env, which element, which value) are worked out
only once a check fails, and raised as :class:`msagent.errors.EnvDataError`.

Steps are counted per env from its first reset over all its episodes ("step 1234 of env 3");
in a synchronous vector env every env has taken the same number of steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from msagent.errors import EnvDataError

STEP_MEANING = "env steps since its first reset, all episodes"
"""How the step number in every message is counted."""


class SpaceSpec(NamedTuple):
    """What one observation of a space looks like, in the terms the checks use.

    Attributes:
        shape: shape of one observation.
        dtype: the space's declared dtype.
        kinds: numpy dtype kinds accepted (float64 for a float32 Box is fine; float for an
            integer space is not).
        low: inclusive lower bound of integer spaces (broadcasts over ``shape``), or None.
        high: exclusive upper bound of integer spaces, or None.
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    kinds: str
    low: np.ndarray | None = None
    high: np.ndarray | None = None


def space_spec(space: Any) -> SpaceSpec | None:
    """The checkable description of a gymnasium space; None for spaces not checked (Dict...)."""
    if isinstance(space, gym.spaces.Box):
        kinds = "fiub" if space.dtype.kind == "f" else "iub"
        return SpaceSpec(tuple(space.shape), space.dtype, kinds)
    if isinstance(space, gym.spaces.Discrete):
        start = np.asarray(space.start)
        return SpaceSpec((), space.dtype, "iu", start, start + space.n)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return SpaceSpec(tuple(space.shape), space.dtype, "iu", space.start,
                         space.start + space.nvec)
    if isinstance(space, gym.spaces.MultiBinary):
        return SpaceSpec(tuple(space.shape), space.dtype, "iub", np.asarray(0), np.asarray(2))
    return None


class ObsChecker:
    """Refuses observation and reward batches that do not match the env's declared space.

    Args:
        space: the observation space of ONE env (``envs.single_observation_space``); None or
            an unsupported space (Dict, Tuple, ...) checks rewards only.
        env_label: names the group of envs in messages, e.g. ``"worker EnvWorker#0"``
            gives ``"env 3 of worker EnvWorker#0"``.
        num_envs: rows every batch must have (None: any).
    """

    def __init__(self, space: Any, env_label: str = "", num_envs: int | None = None) -> None:
        self.space, self.env_label, self.num_envs = space, env_label, num_envs
        self.spec = space_spec(space)

    def check_obs(self, obs: Any, step: int, env_ids: Sequence[int] | None = None,
                  what: str = "observation") -> None:
        """Raise EnvDataError unless ``obs`` is a valid ``[K, *space.shape]`` batch.

        Args:
            obs: the batch; row ``j`` came from env ``env_ids[j]`` (default: env ``j``).
            step: the step that produced it (0 for reset), see :data:`STEP_MEANING`.
            env_ids: env index of each row, when the rows are not all envs in order.
            what: what the rows are, for the message (e.g. ``"final observation"``).
        """
        spec = self.spec
        if spec is None:
            return
        obs = np.asarray(obs)
        if not self._layout_ok(obs, spec, env_ids):
            raise self._layout_error(obs, step, env_ids, what)
        if obs.dtype.kind == "f" and not np.isfinite(obs).all():
            bad = ~np.isfinite(obs)
            raise self._value_error(obs, bad, step, env_ids, what, "is not finite")
        if spec.low is not None and ((obs < spec.low).any() or (obs >= spec.high).any()):
            bad = (obs < spec.low) | (obs >= spec.high)
            raise self._value_error(obs, bad, step, env_ids, what, f"lies outside {self.space}")

    def _layout_ok(self, obs: np.ndarray, spec: SpaceSpec,
                   env_ids: Sequence[int] | None) -> bool:
        """Shape ``[K, *shape]`` (K = num_envs unless rows are picked) and an accepted kind."""
        rows = obs.shape[:1] == (self.num_envs,) or self.num_envs is None or env_ids is not None
        kind_ok = obs.dtype.kind in spec.kinds
        return obs.ndim > 0 and obs.shape[1:] == spec.shape and kind_ok and rows

    def check_rewards(self, rewards: Any, step: int) -> None:
        """Raise EnvDataError unless ``rewards`` is a ``[K]`` batch of finite numbers."""
        rewards = np.asarray(rewards)
        rows_ok = self.num_envs is None or rewards.shape == (self.num_envs,)
        if rewards.ndim != 1 or rewards.dtype.kind not in "fiub" or not rows_ok:
            raise EnvDataError(f"{self._where(None, step)}: the reward batch should be "
                               f"[{self.num_envs or 'K'}] numbers, got shape {rewards.shape} "
                               f"dtype {rewards.dtype}")
        if rewards.dtype.kind == "f" and not np.isfinite(rewards).all():
            i = int(np.flatnonzero(~np.isfinite(rewards))[0])
            value = rewards[i].item()
            raise EnvDataError(f"{self._where(i, step)}: reward = {value!r} is not finite")

    def explain(self, rows: Sequence[Any] | None, step: int) -> EnvDataError | None:
        """Find the first single-env observation that breaks the space (after a vector env
        failed to stack them); None when every row fits, so the caller re-raises its error."""
        if self.spec is None or rows is None:
            return None
        for i, row in enumerate(rows):
            try:
                self.check_obs(np.expand_dims(np.asarray(row), 0), step, env_ids=[i])
            except EnvDataError as exc:
                return exc
            except (TypeError, ValueError):  # not even an array
                return EnvDataError(f"{self._where(i, step)}: observation is a "
                                    f"{type(row).__name__}; {self._declared()}")
        return None

    # ------------------------------------------------------------------------- messages

    def _where(self, env: int | None, step: int) -> str:
        """``"env 3 of worker X, step 12 (...)"``; without an env, the whole group."""
        group = self.env_label or "the envs"
        who = group if env is None else f"env {env}" + (f" of {group}" if self.env_label else "")
        return f"{who}, step {step} ({STEP_MEANING})"

    def _declared(self) -> str:
        """The declared space and what one observation of it looks like."""
        spec = self.spec
        return (f"declared observation_space {self.space} expects shape {spec.shape} "
                f"dtype {spec.dtype}")

    def _layout_error(self, obs: np.ndarray, step: int, env_ids: Sequence[int] | None,
                      what: str) -> EnvDataError:
        """The batch (or one env's row) has the wrong shape, row count or dtype kind."""
        got = f"got shape {obs.shape[1:]} dtype {obs.dtype}"
        if env_ids is not None and len(env_ids) == 1:
            return EnvDataError(f"{self._where(env_ids[0], step)}: {what} does not match the "
                                f"space: {self._declared()}, {got}")
        rows = self.num_envs if self.num_envs is not None else "K"
        expected = ", ".join(map(str, (rows, *self.spec.shape)))
        return EnvDataError(
            f"{self._where(None, step)}: {what} batch does not match the space: "
            f"{self._declared()}, so batches [{expected}]; got batch shape {obs.shape} "
            f"dtype {obs.dtype}")

    def _value_error(self, obs: np.ndarray, bad: np.ndarray, step: int,
                     env_ids: Sequence[int] | None, what: str, why: str) -> EnvDataError:
        """Name the first offending element: its env, its index in the observation, its value."""
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        row, index = first[0], first[1:]
        env = env_ids[row] if env_ids is not None else row
        element = f"{what}[{', '.join(map(str, index))}]" if index else what
        count = f"{int(bad.sum())} of {bad.size} values in the batch"
        return EnvDataError(f"{self._where(env, step)}: {element} = {obs[first].item()!r} {why} "
                            f"({count}); {self._declared()}, got shape {obs.shape[1:]} "
                            f"dtype {obs.dtype}")
