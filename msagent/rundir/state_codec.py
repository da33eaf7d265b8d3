"""Split nested state (an optimizer's ``state_dict()``) into tensors and a JSON skeleton.

Tensors go to a safetensors file as numpy arrays keyed by their path; everything else (ints,
floats, bools, strings, None, and the shape of dicts, lists and tuples) goes to JSON, tagged
so that int dict keys and tuples come back as they were. Nothing is pickled.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

TENSOR, ARRAY, DICT, LIST, TUPLE = "$tensor", "$array", "$dict", "$list", "$tuple"
_SCALARS = (bool, int, float, str, type(None))
_VIEW_INTS = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}
"""Integer dtypes a tensor without a numpy dtype (bfloat16, float8) is stored as, by size."""


def flatten_state(nested: Any, prefix: str = "") -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Split ``nested`` into ``(tensors, skeleton)`` for a safetensors file plus JSON.

    Args:
        nested: Dicts (str/int/float/bool/None keys), lists, tuples, torch tensors, numpy
            arrays and scalars, e.g. ``optimizer.state_dict()``.
        prefix: Prepended to every tensor key, so several states can share one file.

    Returns:
        Arrays by path, and a JSON-able skeleton that :func:`unflatten_state` reverses.

    Raises:
        TypeError: On a value of another type (named by its path).
    """
    tensors: dict[str, np.ndarray] = {}
    skeleton = _encode(nested, prefix, tensors)
    return tensors, {"root": skeleton}


def unflatten_state(tensors: dict[str, np.ndarray], skeleton: dict[str, Any]) -> Any:
    """Rebuild what :func:`flatten_state` split, bit for bit (tensors come back on the CPU)."""
    return _decode(skeleton["root"], tensors)


def _encode(value: Any, path: str, out: dict[str, np.ndarray]) -> Any:
    """Encode one value: containers recursively, arrays into ``out``, scalars as they are."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, dict):
        return {DICT: [[_key(k, path), _encode(v, _join(path, k), out)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        items = [_encode(v, _join(path, i), out) for i, v in enumerate(value)]
        return {TUPLE if isinstance(value, tuple) else LIST: items}
    if isinstance(value, (np.ndarray, np.generic)):
        scalar = isinstance(value, np.generic)
        return {ARRAY: _store(path, np.asarray(value), out), "scalar": scalar}
    if _is_tensor(value):
        return _encode_tensor(value, path, out)
    raise TypeError(f"cannot checkpoint {type(value).__name__} at {path or '<root>'!r}")


def _encode_tensor(value: Any, path: str, out: dict[str, np.ndarray]) -> dict[str, Any]:
    """Store a torch tensor's bytes as a numpy array, viewed as ints if numpy lacks its dtype."""
    import torch

    tensor = value.detach().cpu().contiguous()
    dtype = str(tensor.dtype).removeprefix("torch.")
    try:
        array = tensor.numpy()
        viewed = False
    except TypeError:
        array = tensor.view(getattr(torch, _VIEW_INTS[tensor.element_size()])).numpy()
        viewed = True
    return {TENSOR: _store(path, array, out), "dtype": dtype, "view": viewed}


def _decode(node: Any, tensors: dict[str, np.ndarray]) -> Any:
    """Reverse :func:`_encode` for one node."""
    if not isinstance(node, dict):
        return node
    if DICT in node:
        return {_unkey(k): _decode(v, tensors) for k, v in node[DICT]}
    if LIST in node:
        return [_decode(v, tensors) for v in node[LIST]]
    if TUPLE in node:
        return tuple(_decode(v, tensors) for v in node[TUPLE])
    if ARRAY in node:
        array = np.array(tensors[node[ARRAY]], copy=True)
        return array[()] if node.get("scalar") else array
    if TENSOR in node:
        return _decode_tensor(node, tensors)
    raise ValueError(f"not a state skeleton node: {sorted(node)}")


def _decode_tensor(node: dict[str, Any], tensors: dict[str, np.ndarray]) -> Any:
    """Rebuild a CPU tensor with its original dtype."""
    import torch

    tensor = torch.from_numpy(np.array(tensors[node[TENSOR]], copy=True))
    return tensor.view(getattr(torch, node["dtype"])) if node.get("view") else tensor


def _store(path: str, array: np.ndarray, out: dict[str, np.ndarray]) -> str:
    """Put ``array`` into ``out`` under ``path`` (refusing a path used twice)."""
    if path in out:
        raise ValueError(f"two state entries map to the tensor key {path!r}")
    out[path] = np.asarray(array, order="C")  # keeps 0-d shapes
    return path


def _key(key: Any, path: str) -> Any:
    """A dict key JSON keeps exactly (tuples of scalars become tagged lists)."""
    if isinstance(key, _SCALARS):
        return key
    if isinstance(key, tuple) and all(isinstance(k, _SCALARS) for k in key):
        return {TUPLE: list(key)}
    raise TypeError(f"cannot checkpoint a dict key of type {type(key).__name__} at {path!r}")


def _unkey(key: Any) -> Any:
    """Reverse :func:`_key`."""
    return tuple(key[TUPLE]) if isinstance(key, dict) else key


def _join(path: str, key: Any) -> str:
    """The tensor key of a child entry."""
    return f"{path}/{key}" if path else str(key)


def _is_tensor(value: Any) -> bool:
    """True for a torch tensor, without importing torch when nobody has."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)
