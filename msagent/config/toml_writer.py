"""A small TOML writer for plain config data, used when ``tomli_w`` is not installed.

It writes what a TrainConfig holds: nested tables of strings, ints, floats, bools and
arrays (arrays of tables as inline tables). ``tomllib.loads(dumps(d)) == d`` for such data.
"""

from __future__ import annotations

import math
import re
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}


def dumps(data: dict[str, Any]) -> str:
    """Render a nested dict as TOML text: scalars first, then one ``[table]`` per sub-dict."""
    return "\n".join(_table_lines(data, [])).lstrip("\n") + "\n"


def _table_lines(table: dict[str, Any], path: list[str]) -> list[str]:
    """Lines of one table (header, its values) followed by its sub-tables."""
    values = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
    tables = [(k, v) for k, v in table.items() if isinstance(v, dict)]
    lines = [f"\n[{'.'.join(_key(p) for p in path)}]"] if path and (values or not tables) else []
    lines += [f"{_key(k)} = {_value(v)}" for k, v in values]
    for key, sub in tables:
        lines += _table_lines(sub, [*path, key])
    return lines


def _value(value: Any) -> str:
    """One TOML value, inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot write a {type(value).__name__} as TOML")


def _float(value: float) -> str:
    """A float TOML reads back exactly (``repr`` digits; inf and nan spelled TOML's way)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = repr(value)
    return text if any(c in text for c in ".eE") else text + ".0"


def _string(value: str) -> str:
    """A TOML basic string, escaping quotes, backslashes and control characters."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _key(key: str) -> str:
    """A key, bare when TOML allows it, quoted otherwise."""
    return key if _BARE_KEY.fullmatch(key) else _string(key)
