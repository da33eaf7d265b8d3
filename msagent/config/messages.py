"""Turn pydantic's validation errors into messages a person editing a TOML file can act on."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Collection, Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

_FREE_FORM = object()
"""Marks a free-form table (a dict field): the next location item is a user key, then stop."""


def describe(
    exc: ValidationError, model: type[BaseModel], source: str, set_keys: Collection[str] = ()
) -> str:
    """One line per bad key, under a header naming the file, so every problem shows at once.

    Args:
        exc: What pydantic raised.
        model: The model that was validated (to walk field names and list known keys).
        source: The config file's path (or another name of where the data came from).
        set_keys: Dotted keys given by ``--set``, marked as such in the message.
    """
    grouped: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False):
        key, parent = key_path(error["loc"], model)
        grouped.setdefault(key, []).append(_explain(error, parent, key))
    lines = [f"invalid configuration in {source}:"]
    for key, texts in grouped.items():
        origin = " (from --set)" if key in set_keys else ""
        lines.append(f"  {key}{origin}: {'; '.join(dict.fromkeys(texts))}")
    return "\n".join(lines)


def key_path(loc: Iterable[Any], model: type[BaseModel]) -> tuple[str, type[BaseModel] | None]:
    """The dotted TOML key an error location names, and the model (table) that holds it.

    Location items past a leaf field (pydantic's union and type tags) are dropped.
    """
    parts: list[str] = []
    current: Any = model
    parent: type[BaseModel] | None = None
    for item in loc:
        if current is None:
            break
        if isinstance(current, _ListOf) and isinstance(item, int):  # an array of tables
            parts[-1] += f"[{item}]"
            current = current.model
            continue
        parts.append(str(item))
        parent = current if _is_model(current) else None
        current = _child(current, item)
    return ".".join(parts) or "(top level)", parent


def _child(current: Any, item: Any) -> Any:
    """What the location item leads to: a nested model, a free-form table, or a leaf (None)."""
    if not _is_model(current):
        return None
    field = current.model_fields.get(str(item))
    if field is None:
        return None
    annotation = _unwrap_optional(field.annotation)
    if _is_model(annotation):
        return annotation
    if typing.get_origin(annotation) is list and _is_model(typing.get_args(annotation)[0]):
        return _ListOf(typing.get_args(annotation)[0])
    return _FREE_FORM if typing.get_origin(annotation) is dict else None


class _ListOf:
    """Marks an array of tables (``[[league.players]]``): the next location item is an index."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model


def _explain(error: dict[str, Any], parent: type[BaseModel] | None, key: str) -> str:
    """Say what was expected instead of what pydantic's rule was called."""
    kind, msg = error["type"], str(error["msg"])
    if kind == "extra_forbidden":
        return _unknown_key(key.rsplit(".", 1)[-1], parent)
    if kind == "missing":
        return "required key is missing"
    if msg.startswith("Value error, "):
        return msg.removeprefix("Value error, ")
    text = f"expected {msg.removeprefix('Input should be ')}" if msg.startswith("Input ") else msg
    value = error.get("input")
    if isinstance(value, (dict, list)) and kind not in ("dict_type", "list_type", "model_type"):
        return text
    return f"{text}, got {value!r} ({type(value).__name__})"


def _unknown_key(name: str, parent: type[BaseModel] | None) -> str:
    """Name the known keys of the table (and the closest one, for a likely typo)."""
    known = sorted(parent.model_fields) if parent is not None else []
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key; expected one of {known}{hint}"


def _unwrap_optional(annotation: Any) -> Any:
    """``X | None`` -> ``X`` (other unions stay as they are)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return args[0] if len(args) == 1 else annotation
    return annotation


def _is_model(value: Any) -> bool:
    """True for a pydantic model class."""
    return isinstance(value, type) and issubclass(value, BaseModel)
