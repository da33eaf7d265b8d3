"""``--set a.b.c=value`` overrides: the value is a TOML literal, else a plain string."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from typing import Any

from msagent.errors import ConfigError

_KEY = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
"""A dotted path of TOML bare keys."""


def parse_override(text: str) -> tuple[str, Any]:
    """Split ``key=value`` into the dotted key and the parsed value, refusing bad syntax.

    Raises:
        ConfigError: If there is no ``=`` or the key is not a dotted path of bare keys.
    """
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not _KEY.fullmatch(key):
        raise ConfigError(
            f"bad --set {text!r}: expected KEY=VALUE with a dotted KEY of letters, digits,"
            " '_' or '-', e.g. services.env_worker.num_envs=16"
        )
    return key, parse_value(raw.strip())


def parse_value(raw: str) -> Any:
    """Read ``raw`` as a TOML value (``3``, ``0.5``, ``true``, ``"x"``, ``[1, 2]``) or a string."""
    if "\n" in raw or "\r" in raw:
        return raw
    try:
        return tomllib.loads(f"value = {raw}")["value"]
    except tomllib.TOMLDecodeError:
        return raw


def apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> list[str]:
    """Set each override into the nested ``data`` (in place); return the dotted keys set.

    Raises:
        ConfigError: On bad syntax, or when a key goes through a value that is not a table.
    """
    keys = []
    for text in overrides:
        key, value = parse_override(text)
        set_path(data, key, value)
        keys.append(key)
    return keys


def set_path(data: dict[str, Any], key: str, value: Any) -> None:
    """Set ``data[a][b][c] = value`` for ``key = "a.b.c"``, creating missing tables."""
    parts = key.split(".")
    table = data
    for depth, part in enumerate(parts[:-1]):
        table = table.setdefault(part, {})
        if not isinstance(table, dict):
            prefix = ".".join(parts[: depth + 1])
            raise ConfigError(f"cannot --set {key}: {prefix} is a value, not a table")
    table[parts[-1]] = value
