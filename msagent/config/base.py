"""The base of every configuration section: unknown keys and silent type coercion are errors."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A strict TOML table: unknown keys fail, ``"3"`` is not an int, ``1`` is not a bool.

    Ints are accepted where floats are expected (TOML writes ``2`` for ``2.0``); assignments
    are validated too, so a config stays valid after it is edited in code.
    """

    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True)
