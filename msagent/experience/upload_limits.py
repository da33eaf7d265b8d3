"""How much structure an upload of one game may hold, and decoders that stop there.

Decoding is the step of an upload whose cost the body's size alone does not bound: a 1 MiB
msgpack body of empty maps decoded to a million dicts (~80 times the body in memory, 0.2 s of
CPU) before any check could look at them. A game's schema bounds what a legitimate upload
holds: one map of the upload's fields, whose arrays are dtype/shape/data maps or nested lists
of at most ``max_steps`` steps of the declared shapes. :class:`UploadLimits` is that bound
(:meth:`GameSchema.limits <msagent.experience.schema.GameSchema.limits>`), and
:func:`unpack_bounded` and :func:`check_json` refuse a body past it (:class:`TooLarge`)
having built at most that much.

Hand-written because neither decoder counts containers or items itself: msgpack's
``max_*_len`` options bound one container or string each (used here), and its hooks see each
map and list once built, so a counter there stops the decode at the budget; ``json`` has no
limits at all, so its bodies are measured by counting bytes before parsing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np

MAX_DIMS = 8
"""Most dimensions an array's declared shape may have (``decode_array``)."""

MAX_ITEMSIZE = 8
"""Bytes per element of the widest dtype on the wire (float64, int64)."""

TEXT_SLACK = 64
"""Characters of a legitimate upload's one free-text field (``client_version``, at most 64):
brackets and commas inside strings count in :func:`check_json`'s byte counts, so they may
exceed the structure's by this much."""

MAX_TEXT_BYTES = 4 * 64
"""Longest string of a legitimate upload, in UTF-8 bytes: a 64-character ``client_version``
(an episode id has at most 128 ASCII characters)."""

ARRAY_MAP = (2, 3 + MAX_DIMS)
"""Containers (the map, its shape list) and items (3 entries, up to 8 dimensions) of an
array sent as a dtype/shape/data map."""


class TooLarge(ValueError):
    """A body holds more than an upload of its game can; the message names the limit passed
    (``more than 508 maps and lists``, ``501 exceeds max_array_len(500)``, ...)."""


@dataclass(frozen=True)
class UploadLimits:
    """The most a legitimate upload of one game holds.

    Attributes:
        containers: Maps and lists, at every level.
        depth: Deepest nesting of maps and lists.
        items: List elements and map entries, at every level.
        array_len: Longest list.
        map_len: Most entries of one map (twice the upload's fields, so that a body with a
            few unknown fields is told which they are).
        str_len: Longest string, in UTF-8 bytes.
        bin_len: Longest byte string (an array's data: ``max_steps`` steps of float64).
    """

    containers: int
    depth: int
    items: int
    array_len: int
    map_len: int
    str_len: int
    bin_len: int

    @classmethod
    def of(cls, max_steps: int, step_shapes: Sequence[tuple[int, ...]],
           fields: int) -> UploadLimits:
        """The limits of uploads of at most ``max_steps`` steps whose arrays have these shapes
        per step, each sent as a dtype/shape/data map or as nested lists (the larger)."""
        shapes = [(max_steps, *shape) for shape in step_shapes]
        return cls(
            containers=1 + sum(max(ARRAY_MAP[0], _lists_of(s)) for s in shapes),
            depth=1 + max(2, *(len(s) for s in shapes)),
            items=fields + sum(max(ARRAY_MAP[1], math.prod(s) + _lists_of(s) - 1)
                               for s in shapes),
            array_len=max(MAX_DIMS, *(d for s in shapes for d in s)),
            map_len=2 * fields, str_len=MAX_TEXT_BYTES,
            bin_len=MAX_ITEMSIZE * max(math.prod(s) for s in shapes))


def _lists_of(shape: tuple[int, ...]) -> int:
    """Lists of an array of ``shape`` sent as nested lists: 1 + d0 + d0*d1 + ..."""
    return sum(math.prod(shape[:k]) for k in range(len(shape)))


RECORD_LIMITS = UploadLimits(containers=32, depth=3, items=64, array_len=MAX_DIMS,
                             map_len=32, str_len=MAX_TEXT_BYTES, bin_len=-1)
"""The limits of a stream entry's outer map, of either format (arrays only as maps; a
``bin_len`` of -1: msgpack's default, the entry's size), checked before its game is known."""


def unpack_bounded(data: bytes, limits: UploadLimits) -> Any:
    """Plain data from msgpack bytes (str keys only, no extension types, never objects), in
    ``limits`` (its depth is msgpack's own stack, 1024 levels).

    msgpack allocates a list's items when it reads its header, before they arrive: 1,000
    nested headers of 10,000 items each, 3 kB, took 76 MiB and 38 ms. So lists are first
    allowed no longer than a shape's (the dtype/shape/data form has no other); a body with
    longer ones (nested lists, or an attack) is then walked without building anything, to
    show that every list holds what it declares, before it is decoded with ``array_len``:
    its lists' items then take at most 8 bytes per byte of the body.

    Raises:
        TooLarge: The body passes a limit (the message names it).
        ValueError: The bytes are not msgpack (or any of msgpack's own errors).
    """
    short = min(MAX_DIMS, limits.array_len)
    try:
        return _unpack(data, limits, short)
    except _LongList:
        if short == limits.array_len:
            raise
    _check_whole(data)
    return _unpack(data, limits, limits.array_len)


class _LongList(TooLarge):
    """A list longer than the ``max_array_len`` a decode was given."""


def _unpack(data: bytes, limits: UploadLimits, array_len: int) -> Any:
    """msgpack's decode with ``limits`` (lists at most ``array_len`` long), counting maps
    and lists as they are built."""
    left = limits.containers

    def count(container: Any) -> Any:
        """Each map and list, once built: TooLarge past the budget."""
        nonlocal left
        left -= 1
        if left < 0:
            raise TooLarge(f"more than {limits.containers} maps and lists")
        return container

    try:
        return msgpack.unpackb(
            data, raw=False, strict_map_key=True, object_hook=count, list_hook=count,
            max_str_len=limits.str_len, max_bin_len=limits.bin_len, max_ext_len=0,
            max_array_len=array_len, max_map_len=limits.map_len)
    except TooLarge:
        raise
    except ValueError as exc:
        past = _PAST_LIMIT.search(str(exc))  # msgpack's "N exceeds max_array_len(M)"
        if past:
            raise (_LongList if past[1] == "array" else TooLarge)(str(exc)) from None
        raise


_PAST_LIMIT = re.compile(r"exceeds max_(str|bin|array|map)_len")


def _check_whole(data: bytes) -> None:
    """msgpack's errors unless the bytes hold one whole msgpack value, walked in C without
    building it (``Unpacker.skip``); trailing bytes are left to the decode."""
    walker = msgpack.Unpacker(max_buffer_size=max(1, len(data)))
    walker.feed(data)
    walker.skip()


def check_json(data: bytes, limits: UploadLimits) -> None:
    """TooLarge unless a JSON body is within ``limits``, found by counting bytes before any
    parsing: its ``[`` and ``{`` bound its containers, its commas its items, the running
    balance of its brackets its depth. Brackets and commas in strings count too, hence
    ``TEXT_SLACK``. One C pass keeps only those bytes (~1 µs per KiB; counting each byte in
    the whole body took longer), and every count after it is over what is left."""
    kept = data.translate(None, _NOT_STRUCTURE)
    opens, closes = kept.count(b"[") + kept.count(b"{"), kept.count(b"]") + kept.count(b"}")
    most = limits.containers + TEXT_SLACK
    if max(opens, closes) > most:
        raise TooLarge(f"more than {most} maps and lists")
    if len(kept) - opens - closes > limits.items + TEXT_SLACK:
        raise TooLarge(f"more than {limits.items + TEXT_SLACK} list items and map entries")
    deepest = limits.depth + TEXT_SLACK
    if opens > deepest and _depth(kept.translate(None, b",")) > deepest:
        raise TooLarge(f"maps and lists nested more than {deepest} deep")


def _depth(brackets: bytes) -> int:
    """The deepest running balance of a string of brackets."""
    steps = _BALANCE[np.frombuffer(brackets, np.uint8)]
    return int(np.cumsum(steps, dtype=np.int32).max(initial=0))


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b"[]{},")
_BALANCE = np.zeros(256, np.int8)
_BALANCE[list(b"[{")], _BALANCE[list(b"]}")] = 1, -1
