"""The episode record every part of the client pipeline agrees on, and its msgpack form.

A game client uploads an episode; the gateway checks it against the game's
:class:`~msagent.experience.schema.GameSchema`, adds :class:`Provenance` and puts the record's
msgpack bytes on the stream; the ingestion consumer decodes them again (never unpickles) and
writes Parquet rows.

Arrays travel as ``{"dtype": "<f4", "shape": [T, 4], "data": <raw little-endian bytes>}``
(:func:`encode_array`); :func:`decode_array` refuses unknown dtypes, negative or huge shapes
(any dimension, even of an empty array) and byte counts that do not match the declared shape,
before allocating anything.
"""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from itertools import chain
from typing import Any

import msgpack
import numpy as np

from msagent.experience.upload_limits import RECORD_LIMITS, unpack_bounded

RECORD_FORMAT = "msagent-episode/1"
"""Tag of the record's msgpack form (bumped when fields change incompatibly)."""

ALLOWED_DTYPES = ("<f4", "<f8", "<i8", "<i4", "|u1", "|b1")
"""Array dtypes accepted on the wire (numpy ``dtype.str``): float32/64, int64/32, uint8, bool."""

MAX_ARRAY_ELEMENTS = 1 << 26
"""No array on the wire may declare more elements than this (64 Mi), whatever its bytes, nor
a dimension longer, nor non-zero dimensions whose product is (an empty array of shape
``[0, 2**62]`` would pass a count of elements, and numpy cannot make it)."""


class RecordError(ValueError):
    """An uploaded or streamed record is malformed; the message names the field and why."""


@dataclass(frozen=True)
class Provenance:
    """Who sent a record and when, kept with every stored step.

    Attributes:
        client_id: The token's client name (never the token).
        received_at: Unix time (seconds) the gateway accepted the upload.
        client_version: What the client says it is (free text, at most 64 chars).
        model_version: The published model version that acted (None: unknown / not a model).
    """

    client_id: str
    received_at: float
    client_version: str = ""
    model_version: int | None = None


@dataclass
class EpisodeRecord:
    """One uploaded episode (or a batch of consecutive steps of one), checked and stamped.

    Arrays have a leading time axis of length T >= 1. ``log_probs`` are the behaviour policy's
    log-probabilities of the actions taken (needed by V-trace; None when the client did not
    send them). ``terminated``/``truncated`` say how the last step ended the episode (both
    False: more steps of this episode may follow under a later ``part``). ``action_nvec`` is
    the choices of each component of MultiDiscrete actions (``[T, K]`` int64; None for
    Discrete or Box ones): the game's schema sets it, and the store keeps it with the rows.
    """

    game: str
    episode_id: str
    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    log_probs: np.ndarray | None
    terminated: bool
    truncated: bool
    provenance: Provenance
    part: int = 0
    action_nvec: tuple[int, ...] | None = None

    def __len__(self) -> int:
        """Number of steps."""
        return int(self.rewards.shape[0])

    def episode_return(self) -> float:
        """Sum of the rewards."""
        return float(self.rewards.sum())

    def to_msgpack(self) -> bytes:
        """The record as msgpack bytes (what goes on the stream)."""
        p = self.provenance
        body = {
            "format": RECORD_FORMAT, "game": self.game, "episode_id": self.episode_id,
            "part": self.part, "observations": encode_array(self.observations),
            "actions": encode_array(self.actions), "rewards": encode_array(self.rewards),
            "log_probs": None if self.log_probs is None else encode_array(self.log_probs),
            "terminated": self.terminated, "truncated": self.truncated,
            "client_id": p.client_id, "received_at": p.received_at,
            "client_version": p.client_version, "model_version": p.model_version,
        }
        return msgpack.packb(body, use_bin_type=True)

    @classmethod
    def from_msgpack(cls, data: bytes) -> EpisodeRecord:
        """Decode :meth:`to_msgpack`'s bytes; RecordError names what is wrong."""
        try:
            body = unpack_bounded(data, RECORD_LIMITS)
        except (ValueError, msgpack.UnpackException) as exc:  # TooLarge is a ValueError
            raise RecordError(f"record is not valid msgpack: {exc}") from None
        if not isinstance(body, dict) or body.get("format") != RECORD_FORMAT:
            raise RecordError(f"record is not a {RECORD_FORMAT} map")
        return cls.from_map(body)

    @classmethod
    def from_map(cls, body: dict[str, Any]) -> EpisodeRecord:
        """The record of :meth:`to_msgpack`'s map, decoded already (its arrays not checked:
        see ``GameSchema.check``); RecordError names what is wrong."""
        try:
            log_probs = body["log_probs"]
            prov = Provenance(str(body["client_id"]), float(body["received_at"]),
                              str(body["client_version"]), _opt_int(body["model_version"]))
            return cls(str(body["game"]), str(body["episode_id"]),
                       decode_array(body["observations"], "observations"),
                       decode_array(body["actions"], "actions"),
                       decode_array(body["rewards"], "rewards"),
                       None if log_probs is None else decode_array(log_probs, "log_probs"),
                       bool(body["terminated"]), bool(body["truncated"]), prov,
                       int(body["part"]))
        except KeyError as exc:
            raise RecordError(f"record lacks field {exc}") from None
        except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(inf)
            raise RecordError(f"record has a field of the wrong type: {exc}") from None


def _opt_int(value: Any) -> int | None:
    """An int or None (bools are not versions)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"model_version must be an integer or null, got {value!r}")
    return value


def encode_array(array: np.ndarray) -> dict[str, Any]:
    """An array as a msgpack-friendly map of dtype, shape and raw little-endian bytes."""
    array = np.ascontiguousarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return {"dtype": array.dtype.str, "shape": list(array.shape), "data": array.tobytes()}


def decode_array(value: Any, name: str) -> np.ndarray:
    """The array an :func:`encode_array` map describes; RecordError for anything else.

    The declared shape is checked against ``MAX_ARRAY_ELEMENTS`` and the actual byte count
    before any memory is allocated, so a huge declared length costs nothing. The array is a
    read-only view of ``data`` (no copy).
    """
    if not isinstance(value, dict) or value.keys() != _ARRAY_KEYS:
        raise RecordError(f"{name}: expected a map with exactly dtype, shape and data")
    dtype, shape, data = value["dtype"], value["shape"], value["data"]
    np_dtype = _DTYPES.get(dtype) if isinstance(dtype, str) else None
    if np_dtype is None:
        raise RecordError(f"{name}: dtype {_brief(dtype)} is not one of {list(ALLOWED_DTYPES)}")
    if not isinstance(data, bytes | bytearray):
        raise RecordError(f"{name}: data must be bytes")
    count = _element_count(shape, name)
    if len(data) != count * np_dtype.itemsize:
        raise RecordError(f"{name}: shape {shape} of {dtype} needs "
                          f"{count * np_dtype.itemsize} bytes, got {len(data)}")
    array = np.frombuffer(data, dtype=np_dtype)
    return array if len(shape) == 1 else array.reshape(shape)  # 1-d: the byte count said so


def decode_lists(value: list, name: str) -> np.ndarray:
    """The array nested lists of numbers describe (an array's JSON form); RecordError unless
    they are rectangular and hold only numbers.

    The lists are looked at before numpy: from lists holding one long string among numbers,
    ``np.array`` makes a string array of that length per element (a 100 kB body took 763 MiB).
    """
    if not _only_numbers(value):
        raise RecordError(f"{name}: lists must be rectangular and hold only numbers (not "
                          f"booleans)")
    try:
        array = np.array(value)
    except (ValueError, TypeError, OverflowError, RecursionError):
        raise RecordError(f"{name}: lists must be rectangular and hold only numbers") from None
    if array.dtype.kind not in "biuf" or array.ndim == 0:  # object: ints past 64 bits
        raise RecordError(f"{name}: lists must be rectangular and hold only numbers")
    return array


def _only_numbers(value: list) -> bool:
    """Whether nested lists hold numbers only (not booleans: numpy would silently make them
    0 and 1 beside numbers), each level lists only or numbers only, a level at a time:
    ``sum`` adds numbers and refuses anything else, in C (2,000 numbers in 12 µs; collecting
    their types took 60, and is done only for the innermost level)."""
    level = value
    while True:
        try:
            sum(level)
            return bool not in set(map(type, level))
        except (TypeError, OverflowError):  # OverflowError: an int past float, beside floats
            pass
        if set(map(type, level)) != _LIST_TYPE:  # strings, maps, None, lists beside numbers
            return False
        level = list(chain.from_iterable(level))


_LIST_TYPE = {list}
_ARRAY_KEYS = frozenset(("dtype", "shape", "data"))
_DTYPES = {name: np.dtype(name) for name in ALLOWED_DTYPES}


def _element_count(shape: Any, name: str) -> int:
    """The number of elements a declared shape holds (1 to 8 non-negative int dimensions,
    each, and the product of the non-zero ones, at most MAX_ARRAY_ELEMENTS: numpy can then
    make it, even with no elements)."""
    if type(shape) is list and len(shape) == 1 and type(shape[0]) is int \
            and 0 <= shape[0] <= MAX_ARRAY_ELEMENTS:  # the common case, without the loop
        return shape[0]
    if not isinstance(shape, list | tuple) or not 1 <= len(shape) <= 8:
        raise _bad_shape(name, shape)
    count = extent = 1
    for d in shape:
        if type(d) is not int or d < 0:  # bools (an int subclass) are not dimensions
            raise _bad_shape(name, shape)
        count *= d
        extent *= d or 1  # an empty array's other dimensions still have to fit
    if extent > MAX_ARRAY_ELEMENTS:
        raise RecordError(f"{name}: shape {list(shape)} declares more than "
                          f"{MAX_ARRAY_ELEMENTS} elements (or a dimension longer)")
    return count


def _bad_shape(name: str, shape: Any) -> RecordError:
    """The error of a shape that is not 1 to 8 non-negative integers."""
    return RecordError(f"{name}: shape must be 1 to 8 non-negative integers, "
                       f"got {_brief(shape)}")


def _brief(value: Any) -> str:
    """A value the client sent, as a repr of a few dozen characters at most, for a message
    (a plain repr of a huge or deeply nested value costs memory, or raises RecursionError)."""
    return _BRIEF.repr(value)


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxdict = 2, 8, 4
_BRIEF.maxstring = _BRIEF.maxother = _BRIEF.maxlong = 40
