"""Weights <-> bytes with safetensors: a format that holds only arrays, so loading runs no code."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load, save

from msagent.model_pool.errors import InvalidWeightsError
from msagent.vocabulary import Weights

_ORDER_FIELD = "msagent.order"
_RESERVED_NAME = "__metadata__"
_SUPPORTED = frozenset(
    np.dtype(name)
    for name in (
        "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
        "int64", "uint64", "float16", "float32", "float64",
    )
)


def encode_weights(weights: Mapping[str, Any]) -> bytes:
    """Serialize weights to safetensors bytes, so they can be stored and shipped without pickle.

    Arrays are copied to C order and little-endian first (safetensors would otherwise store a
    transposed view's memory as is); names keep their order.

    Args:
        weights: A mapping of parameter name to numpy array.

    Returns:
        The safetensors bytes.

    Raises:
        InvalidWeightsError: If ``weights`` is not a mapping, or an entry is not a storable array.
    """
    if not isinstance(weights, Mapping):
        raise InvalidWeightsError(f"weights must be a dict of name -> numpy array, got {type(weights).__name__}")
    arrays = {name: _storable(name, value) for name, value in weights.items()}
    try:
        return save(arrays, metadata={_ORDER_FIELD: json.dumps(list(arrays))})
    except SafetensorError as exc:  # pragma: no cover - _storable checks what safetensors refuses
        raise InvalidWeightsError(f"safetensors cannot store these weights: {exc}") from exc


def decode_weights(blob: bytes) -> Weights:
    """Rebuild weights from safetensors bytes, in the order they were pushed."""
    arrays = load(blob)
    order = _stored_order(blob)
    return {name: arrays[name] for name in order} if set(order) == set(arrays) else arrays


def _storable(name: object, value: object) -> np.ndarray:
    """Check one entry and return it as a C-ordered little-endian array."""
    if not isinstance(name, str):
        raise InvalidWeightsError(f"weight names must be str, got {name!r} ({type(name).__name__})")
    if name == _RESERVED_NAME:
        raise InvalidWeightsError(f"weight name {name!r} is reserved by safetensors; rename it")
    if not isinstance(value, np.ndarray):
        raise InvalidWeightsError(
            f"weights[{name!r}] is a {type(value).__module__}.{type(value).__name__}, expected numpy.ndarray"
            " (convert tensors with .detach().cpu().numpy())"
        )
    native = value.dtype.newbyteorder("=")
    if native not in _SUPPORTED:
        raise InvalidWeightsError(
            f"weights[{name!r}] has dtype {value.dtype}, which safetensors cannot store; "
            f"use one of {sorted(str(d) for d in _SUPPORTED)}"
        )
    return value.astype(value.dtype.newbyteorder("<"), order="C", copy=False)  # keeps 0-d arrays 0-d


def _stored_order(blob: bytes) -> list[str]:
    """Read the name order that encode_weights wrote into the safetensors header (plain JSON)."""
    (size,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + size])
    return json.loads(header.get(_RESERVED_NAME, {}).get(_ORDER_FIELD, "[]"))
