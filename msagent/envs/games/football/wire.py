"""Length-prefixed msgpack frames over pipes; numpy arrays as ``{dtype, shape, bytes}``.

Shared by the parent (``FootballEnv``) and the child (``server.py``, run by the football
virtual environment's Python), so it imports nothing but the standard library, numpy and
msgpack. Nothing crossing the pipe is ever unpickled.
"""

from __future__ import annotations

import os
import select
import struct
from typing import Any

import msgpack
import numpy as np

_HEADER = struct.Struct(">I")
_ARRAY = "__ndarray__"
MAX_FRAME = 1 << 28
"""The largest frame either side accepts (256 MiB): a corrupt length fails at once."""


class PipeClosed(EOFError):
    """The other side closed the pipe (or died) before a whole frame came."""


class PipeTimeout(TimeoutError):
    """No frame came within the timeout."""


def _encode(obj: Any) -> Any:
    """msgpack's hook for numpy arrays and scalars."""
    if isinstance(obj, np.ndarray):
        array = np.ascontiguousarray(obj)
        return {_ARRAY: True, "dtype": array.dtype.str, "shape": list(array.shape),
                "bytes": array.tobytes()}
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"cannot send a {type(obj).__name__} over the football pipe")


def _decode(obj: dict) -> Any:
    """msgpack's hook turning ``{dtype, shape, bytes}`` maps back into numpy arrays."""
    if obj.get(_ARRAY) is True:
        dtype = np.dtype(obj["dtype"])
        if dtype.hasobject:
            raise ValueError("object arrays are refused on the football pipe")
        # a writable copy: torch refuses to wrap read-only buffers without a warning
        return np.frombuffer(obj["bytes"], dtype=dtype).reshape(obj["shape"]).copy()
    return obj


def pack(message: Any) -> bytes:
    """One frame: a 4-byte big-endian length, then the msgpack body."""
    body = msgpack.packb(message, default=_encode, use_bin_type=True)
    return _HEADER.pack(len(body)) + body


def unpack(body: bytes) -> Any:
    """The message of one frame body."""
    return msgpack.unpackb(body, object_hook=_decode, raw=False)


def write_frame(fd: int, message: Any) -> None:
    """Write one whole frame to the file descriptor ``fd``."""
    view = memoryview(pack(message))
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int, timeout: float | None = None) -> Any:
    """Read one frame from ``fd``; ``timeout`` seconds at most between bytes (None: forever).

    Raises:
        PipeClosed: the pipe closed before a whole frame came.
        PipeTimeout: nothing came for ``timeout`` seconds.
    """
    (length,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, timeout))
    if length > MAX_FRAME:
        raise PipeClosed(f"frame of {length} bytes announced (at most {MAX_FRAME})")
    return unpack(_read_exact(fd, length, timeout))


def _read_exact(fd: int, size: int, timeout: float | None) -> bytes:
    """Exactly ``size`` bytes from ``fd``."""
    chunks, left = [], size
    while left:
        if timeout is not None and not select.select([fd], [], [], timeout)[0]:
            raise PipeTimeout(f"no answer within {timeout:g} s")
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise PipeClosed("pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
