"""Allowed ranges of PPOConfig's numeric fields, shared by PPOConfig and the ``[algorithm]`` table.

One table, so a value refused in code is refused in TOML with the same words, and the TOML
message names the key (``algorithm.lr: lr must be > 0, got -1.0``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Rule = tuple[Callable[[float], bool], str]
"""A test of the value and how to say what it must be."""

_POSITIVE: Rule = (lambda v: v > 0, "> 0")
_NON_NEGATIVE: Rule = (lambda v: v >= 0, ">= 0")
_AT_LEAST_ONE: Rule = (lambda v: v >= 1, ">= 1")

RULES: dict[str, Rule] = {
    "gamma": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "gae_lambda": (lambda v: 0 <= v <= 1, "in [0, 1]"),
    "clip": _POSITIVE,
    "vf_clip": _POSITIVE,
    "vf_coef": _NON_NEGATIVE,
    "ent_coef": _NON_NEGATIVE,
    "lr": _POSITIVE,
    "epochs": _AT_LEAST_ONE,
    "minibatches": _AT_LEAST_ONE,
    "max_grad_norm": _POSITIVE,
    "total_updates": _AT_LEAST_ONE,
    "anneal_s": _POSITIVE,
    "target_kl": _POSITIVE,
    "adam_eps": _POSITIVE,
    "vtrace_clip_rho": _POSITIVE,
    "vtrace_clip_c": _POSITIVE,
    "magnet_coef": _NON_NEGATIVE,
    "magnet_rate": (lambda v: 0 < v <= 1, "in (0, 1]"),
}
"""Field -> rule; None (where the field allows it) is always accepted."""


def range_error(name: str, value: Any) -> str | None:
    """What is wrong with ``value`` for field ``name`` (e.g. "lr must be > 0, got -1.0")."""
    rule = RULES.get(name)
    if rule is None or value is None or isinstance(value, bool):
        return None
    test, text = rule
    if not math.isfinite(value):
        return f"{name} must be a finite number {text}, got {value!r}"
    return None if test(value) else f"{name} must be {text}, got {value!r}"


def range_errors(values: dict[str, Any]) -> list[str]:
    """Every range problem among ``values`` (field -> value), in field order."""
    found = (range_error(name, value) for name, value in values.items())
    return [message for message in found if message is not None]
