"""Metadata <-> bytes with msgpack: plain values only, so decoding never builds arbitrary objects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack
import numpy as np

from msagent.model_pool.errors import InvalidMetadataError


def encode_metadata(metadata: Mapping[str, Any]) -> bytes:
    """Serialize metadata to msgpack bytes, refusing anything that is not a plain value.

    Numpy scalars (``np.float32(0.5)``, ``np.int64(3)``) become the matching Python number, since
    learners report their statistics that way; tuples come back as lists.

    Args:
        metadata: A mapping of str to plain values (dict, list, str, int, float, bool, None, bytes).

    Returns:
        The msgpack bytes.

    Raises:
        InvalidMetadataError: If metadata is not a str-keyed mapping or holds a non-plain value.
    """
    if not isinstance(metadata, Mapping):
        raise InvalidMetadataError(f"metadata must be a dict, got {type(metadata).__name__}")
    bad_keys = [k for k in metadata if not isinstance(k, str)]
    if bad_keys:
        raise InvalidMetadataError(f"metadata keys must be str, got {bad_keys!r}")
    try:
        return msgpack.packb(dict(metadata), use_bin_type=True, default=_plain)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidMetadataError(f"metadata must hold plain values only: {exc}") from exc


def decode_metadata(blob: bytes) -> dict[str, Any]:
    """Rebuild metadata from msgpack bytes (plain values only, no extension types)."""
    return msgpack.unpackb(blob, raw=False, strict_map_key=False, ext_hook=_refuse_ext)


def _plain(value: object) -> object:
    """Turn a numpy scalar into its Python value; refuse everything else msgpack cannot pack."""
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    raise TypeError(f"{value!r} ({type(value).__module__}.{type(value).__name__}) is not a plain value")


def _refuse_ext(code: int, data: bytes) -> object:
    """Refuse msgpack extension types, which encode_metadata never writes."""
    raise InvalidMetadataError(f"stored metadata holds a msgpack extension type {code}; refusing to decode it")
