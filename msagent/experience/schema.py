"""A game's declared upload schema, and the check every uploaded episode passes.

The gateway never trusts a client: an upload is a plain map (decoded from msgpack or JSON,
never unpickled) whose every field is checked here against the game's schema (observation
shape and dtype, action space, length, finite numbers) before it becomes an
:class:`~msagent.experience.records.EpisodeRecord`. Anything else is a :class:`RecordError`
naming the field and the reason; the gateway turns it into a 4xx.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from msagent.experience.records import (EpisodeRecord, Provenance, RecordError, decode_array,
                                        decode_lists)
from msagent.experience.upload_limits import UploadLimits

GAME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""What a game's name may look like (it becomes a URL segment and a Parquet partition); check
with ``fullmatch``: ``match`` lets ``$`` match before a trailing newline."""

EPISODE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
"""What an episode id (the upload's idempotency key) may look like (``fullmatch`` it)."""

UPLOAD_FIELDS = {"episode_id", "part", "client_version", "model_version", "observations",
                 "actions", "rewards", "log_probs", "terminated", "truncated"}
"""Every field an upload may carry; ``log_probs``, ``part``, ``client_version`` and
``model_version`` are optional."""

_FLOAT32 = np.dtype(np.float32)

LOGP_SLACK = 1e-4
"""How far above 0 a discrete action's log-probability may be (rounding) before it is refused."""

ACTION_FIELDS = ("action_n", "action_nvec", "action_shape")
"""The schema's ways to declare its action space, of which exactly one is set."""

MAX_COMPONENTS = 64
"""Most components a MultiDiscrete action may have."""


class GameSchema(BaseModel):
    """What one game's uploads must look like.

    Attributes:
        name: The game's name in URLs and in the store's partitions.
        obs_shape: Shape of one observation.
        obs_dtype: ``float32`` (finite values) or ``uint8`` (images).
        action_n: Number of actions of a Discrete action space (or None).
        action_nvec: Choices of each component of a MultiDiscrete action space (or None).
        action_shape: Shape of a Box action (or None); exactly one of the three is set.
        max_steps: Most steps one upload may carry.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=GAME_NAME.pattern)
    obs_shape: tuple[int, ...] = Field(min_length=1, max_length=4)
    obs_dtype: Literal["float32", "uint8"] = "float32"
    action_n: int | None = Field(None, ge=1)
    action_nvec: tuple[int, ...] | None = Field(None, min_length=1, max_length=MAX_COMPONENTS)
    action_shape: tuple[int, ...] | None = None
    max_steps: int = Field(10_000, ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _one_action_space(self) -> GameSchema:
        declared = [name for name in ACTION_FIELDS if getattr(self, name) is not None]
        if len(declared) != 1:
            raise ValueError(f"declare exactly one of action_n (Discrete), action_nvec "
                             f"(MultiDiscrete) and action_shape (Box); got "
                             f"{', '.join(declared) or 'none'}")
        if any(d < 1 for d in self.obs_shape + (self.action_shape or ())):
            raise ValueError("obs_shape and action_shape must be positive integers")
        if any(n < 1 for n in self.action_nvec or ()):
            raise ValueError(f"action_nvec must be positive integers (choices per component), "
                             f"got {list(self.action_nvec)}")
        return self

    @classmethod
    def from_spaces(cls, name: str, obs_space: Any, action_space: Any,
                    max_steps: int = 10_000) -> GameSchema:
        """The schema of a Gymnasium env's spaces (Box observations; Discrete, 1-d
        MultiDiscrete starting at 0, or Box actions)."""
        from gymnasium import spaces

        if not isinstance(obs_space, spaces.Box):
            raise RecordError(f"game {name!r}: only Box observations can be uploaded, "
                              f"not {obs_space}")
        dtype = "uint8" if obs_space.dtype == np.uint8 else "float32"
        if isinstance(action_space, spaces.Discrete):
            return cls(name=name, obs_shape=obs_space.shape, obs_dtype=dtype,
                       action_n=int(action_space.n), max_steps=max_steps)
        if isinstance(action_space, spaces.MultiDiscrete):
            return cls(name=name, obs_shape=obs_space.shape, obs_dtype=dtype,
                       action_nvec=_nvec_of(name, action_space), max_steps=max_steps)
        if isinstance(action_space, spaces.Box):
            return cls(name=name, obs_shape=obs_space.shape, obs_dtype=dtype,
                       action_shape=action_space.shape, max_steps=max_steps)
        raise RecordError(f"game {name!r}: action space {action_space} cannot be uploaded")

    @cached_property
    def limits(self) -> UploadLimits:
        """The most structure a legitimate upload of this game holds, which its decoders
        refuse to go past (computed once)."""
        actions = ((len(self.action_nvec),) if self.action_nvec is not None
                   else self.action_shape or ())
        return UploadLimits.of(self.max_steps, (self.obs_shape, actions, (), ()),
                               len(UPLOAD_FIELDS))

    def validate_upload(self, body: Any, provenance: Provenance,
                        scan_values: bool = True) -> EpisodeRecord:
        """The checked record of one decoded upload body; RecordError says what is wrong
        (``scan_values``: as :meth:`check`'s)."""
        if not isinstance(body, dict):
            raise RecordError("the upload must be a map of fields")
        if not body.keys() <= UPLOAD_FIELDS:
            raise RecordError(f"unknown fields {sorted(map(str, set(body) - UPLOAD_FIELDS))}; "
                              f"allowed: {sorted(UPLOAD_FIELDS)}")
        episode_id = _episode_id(body.get("episode_id"))
        rewards = _as_floats(_array(body, "rewards"), "rewards")
        steps = _length(rewards, self.max_steps)  # before the other arrays are decoded
        log_probs = body.get("log_probs")
        return self._checked(
            episode_id, steps, _array(body, "observations"), _array(body, "actions"), rewards,
            None if log_probs is None else _to_array(log_probs, "log_probs"),
            (body.get("terminated"), body.get("truncated"), body.get("part", 0)),
            Provenance(provenance.client_id, provenance.received_at,
                       body.get("client_version", ""), body.get("model_version")), scan_values)

    def check(self, record: EpisodeRecord, scan_values: bool = True) -> EpisodeRecord:
        """The record with every field checked against this schema (arrays converted to the
        declared dtypes); RecordError names the first field that is wrong.

        The gateway checks each upload with it, and the ingestion consumer each record it
        reads from the stream again (whatever wrote there). ``scan_values=False`` checks
        shapes, dtypes and fields but leaves the values to :meth:`scan_values` (the consumer
        scans a whole batch's values at once)."""
        rewards = _as_floats(record.rewards, "rewards")
        steps = _length(rewards, self.max_steps)
        return self._checked(_episode_id(record.episode_id), steps, record.observations,
                             record.actions, rewards, record.log_probs,
                             (record.terminated, record.truncated, record.part),
                             record.provenance, scan_values)

    def _checked(self, episode_id: str, steps: int, observations: np.ndarray,
                 actions: np.ndarray, rewards: np.ndarray, log_probs: np.ndarray | None,
                 flags: tuple[Any, Any, Any], provenance: Provenance,
                 scan_values: bool) -> EpisodeRecord:
        """The record of fields whose id and rewards are checked already: the rest checked
        (``flags``: terminated, truncated, part; the provenance's client part too), in one
        pass shared by uploads and records (building each upload's record twice made the
        consumer's structural check of a CartPole episode take 33-41 µs instead of 22-25)."""
        terminated, truncated, part = flags
        p = provenance
        checked = EpisodeRecord(
            game=self.name, episode_id=episode_id,
            observations=self._observations(observations, steps),
            actions=self._actions(actions, steps),
            rewards=rewards, log_probs=self._log_probs(log_probs, steps),
            terminated=_flag(terminated, "terminated"), truncated=_flag(truncated, "truncated"),
            provenance=Provenance(p.client_id, p.received_at,
                                  _text(p.client_version, "client_version", 64),
                                  _model_version(p.model_version)),
            part=_int_in(part, "part", 0, 1_000_000), action_nvec=self.action_nvec)
        if scan_values:
            self.scan_values(checked)
        return checked

    def scan_values(self, record: EpisodeRecord) -> None:
        """RecordError unless the values of a record :meth:`check` returned are in range:
        finite floats, actions inside the action space, log-probabilities at most 0 for
        choices.

        Works as well on one record whose arrays are several checked records' concatenated
        along the time axis (one pass over a batch; the messages' step numbers are then the
        batch's)."""
        _finite(record.rewards, "rewards")
        if self.obs_dtype == "float32":
            _finite(record.observations, "observations")
        self._action_values(record.actions)
        logp = record.log_probs
        if logp is not None:
            _finite(logp, "log_probs")
            if self.integer_actions and logp.size and logp.max() > LOGP_SLACK:
                raise RecordError(f"log_probs: {float(logp.max())} is above 0 (a probability "
                                  f"> 1)")

    def value_errors(self, records: list[EpisodeRecord]) -> dict[int, str]:
        """Why each of these records (from :meth:`check` with ``scan_values=False``) fails
        :meth:`scan_values`, by index: one scan of them all, and one each only when that
        finds a bad value."""
        if not records:
            return {}
        try:
            self.scan_values(_concatenated(records))
            return {}
        except RecordError:
            pass
        errors = {}
        for i, record in enumerate(records):
            try:
                self.scan_values(record)
            except RecordError as exc:
                errors[i] = str(exc)
        return errors

    def _observations(self, raw: np.ndarray, steps: int) -> np.ndarray:
        """Observations of the declared shape and dtype."""
        obs = _shaped(raw, (steps, *self.obs_shape), "observations")
        if self.obs_dtype == "uint8":
            if obs.dtype != np.uint8:
                ints = _ints(obs, "observations")
                if ints.size and (ints.min() < 0 or ints.max() > 255):
                    raise RecordError("observations: uint8 values must lie in 0..255")
                obs = ints.astype(np.uint8)
            return obs
        return _as_floats(obs, "observations")

    @property
    def integer_actions(self) -> bool:
        """Whether actions are choices (Discrete or MultiDiscrete), whose log-probabilities
        are at most 0."""
        return self.action_shape is None

    def _actions(self, raw: np.ndarray, steps: int) -> np.ndarray:
        """Actions of the declared shape and dtype."""
        if self.action_nvec is not None:
            return _ints(_shaped(raw, (steps, len(self.action_nvec)), "actions"), "actions")
        if self.action_n is None:
            return _as_floats(_shaped(raw, (steps, *self.action_shape), "actions"), "actions")
        return _ints(_shaped(raw, (steps,), "actions"), "actions")

    def _action_values(self, actions: np.ndarray) -> None:
        """Actions inside the declared action space."""
        if self.action_nvec is not None:
            _multi_discrete(actions, self.action_nvec)
        elif self.action_n is None:
            _finite(actions, "actions")
        elif actions.size and actions.view(np.uint64).max() >= self.action_n:  # < 0: huge
            bad = actions[(actions < 0) | (actions >= self.action_n)][0]
            raise RecordError(f"actions: {int(bad)} is outside Discrete({self.action_n})")

    def _log_probs(self, logp: np.ndarray | None, steps: int) -> np.ndarray | None:
        """Behaviour log-probabilities, when sent, one float per step (their values are
        scanned with the rest: finite, and <= 0 for discrete actions, a multi-discrete
        action's being the sum of its components')."""
        if logp is None:
            return None
        return _shaped(_as_floats(logp, "log_probs"), (steps,), "log_probs")


def _concatenated(records: list[EpisodeRecord]) -> EpisodeRecord:
    """The records' arrays joined along the time axis, as one record (for one value scan)."""
    first = records[0]
    logps = [r.log_probs for r in records if r.log_probs is not None]
    return EpisodeRecord(
        game=first.game, episode_id=first.episode_id,
        observations=np.concatenate([r.observations for r in records]),
        actions=np.concatenate([r.actions for r in records]),
        rewards=np.concatenate([r.rewards for r in records]),
        log_probs=np.concatenate(logps) if logps else None, terminated=False, truncated=False,
        provenance=first.provenance)


def _nvec_of(name: str, space: Any) -> tuple[int, ...]:
    """A MultiDiscrete space's choices per component, if uploads can carry its actions (1-d,
    every component starting at 0: what msagent policies act in)."""
    start = np.asarray(getattr(space, "start", 0))
    if len(space.shape) != 1 or np.any(start != 0):
        raise RecordError(f"game {name!r}: action space MultiDiscrete(nvec="
                          f"{space.nvec.tolist()}, start={start.tolist()}) "
                          f"cannot be uploaded (a MultiDiscrete action space must be 1-d and "
                          f"start at 0)")
    return tuple(int(n) for n in space.nvec)


def _multi_discrete(actions: np.ndarray, nvec: tuple[int, ...]) -> None:
    """Multi-discrete actions ``[steps, K]`` with component k in ``0..nvec[k]-1``."""
    high = np.asarray(nvec, np.int64)
    outside = (actions < 0) | (actions >= high)
    if outside.any():
        step, k = (int(i) for i in np.argwhere(outside)[0])
        raise RecordError(f"actions: step {step}, component {k}: {int(actions[step, k])} is "
                          f"outside 0..{nvec[k] - 1} (MultiDiscrete({list(nvec)}))")


def _array(body: dict, name: str) -> np.ndarray:
    """A required array field."""
    if name not in body:
        raise RecordError(f"missing field {name!r}")
    return _to_array(body[name], name)


def _to_array(value: Any, name: str) -> np.ndarray:
    """An encoded array map, or nested lists of numbers (JSON), as a numpy array."""
    if isinstance(value, dict):
        return decode_array(value, name)
    if not isinstance(value, list):
        raise RecordError(f"{name}: expected an array (a list or a dtype/shape/data map)")
    return decode_lists(value, name)


def _length(rewards: np.ndarray, max_steps: int) -> int:
    """The upload's number of steps, from its rewards."""
    if rewards.ndim != 1 or not 1 <= rewards.shape[0] <= max_steps:
        raise RecordError(f"rewards: expected shape [T] with 1 <= T <= {max_steps}, got "
                          f"{list(rewards.shape)}")
    return int(rewards.shape[0])


def _shaped(array: np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    """The array, if it has exactly the expected shape."""
    if tuple(array.shape) != shape:
        raise RecordError(f"{name}: expected shape {list(shape)}, got {list(array.shape)}")
    return array


def _as_floats(array: np.ndarray, name: str) -> np.ndarray:
    """The numeric array as float32 (no copy when it is float32 already; values beyond
    float32 become infinite, which the value scan refuses)."""
    if array.dtype != _FLOAT32:
        if array.dtype.kind not in "biuf":
            raise RecordError(f"{name}: expected numbers, got dtype {array.dtype}")
        with np.errstate(over="ignore", invalid="ignore"):
            array = array.astype(np.float32)
    return array


def _finite(array: np.ndarray, name: str) -> None:
    """RecordError if the float array holds NaN or infinities."""
    if not np.isfinite(array).all():
        raise RecordError(f"{name}: holds NaN or infinite values (or values beyond float32)")


def _ints(array: np.ndarray, name: str) -> np.ndarray:
    """The integer array as int64 (no copy when it is already; floats are refused, not
    rounded)."""
    if array.dtype.kind not in "iu" or array.dtype == np.uint64:
        raise RecordError(f"{name}: expected integers, got dtype {array.dtype}")
    return array.astype(np.int64, copy=False)


def _flag(value: Any, name: str) -> bool:
    """A required boolean."""
    if not isinstance(value, bool):
        raise RecordError(f"{name}: expected true or false, got {type(value).__name__}")
    return value


def _episode_id(value: Any) -> str:
    """The idempotency key."""
    if not isinstance(value, str) or not EPISODE_ID.fullmatch(value):
        raise RecordError("episode_id: expected 1-128 characters of [A-Za-z0-9_.:-] "
                          "starting with a letter or digit")
    return value


def _text(value: Any, name: str, limit: int) -> str:
    """A short printable string."""
    if not isinstance(value, str) or len(value) > limit or not value.isprintable():
        raise RecordError(f"{name}: expected printable text of at most {limit} characters")
    return value


def _int_in(value: Any, name: str, low: int, high: int) -> int:
    """An integer within bounds (bools are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RecordError(f"{name}: expected an integer in {low}..{high}")
    return value


def _model_version(value: Any) -> int | None:
    """The model version that acted, or None."""
    return None if value is None else _int_in(value, "model_version", 0, 2**62)
