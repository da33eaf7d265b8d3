"""Checks of call arguments, done before a table changes so that a bad call changes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def check_items(items: Sequence[Any]) -> list[Any]:
    """Return items as a list, refusing a bare item passed where a list is expected."""
    if not isinstance(items, (list, tuple)):
        raise TypeError(
            f"items must be a list of items, got {type(items).__name__}; wrap one item as [item]"
        )
    return list(items)


def check_count(n: int) -> int:
    """Return n if it is a positive int (the number of items to sample)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    if n <= 0:
        raise ValueError(f"n must be > 0, got {n}")
    return int(n)


def check_priorities(priorities: Sequence[float] | None, count: int) -> np.ndarray:
    """Return priorities as floats (1.0 each when None); one per item, finite and >= 0."""
    if priorities is None:
        return np.ones(count, dtype=np.float64)
    try:
        values = np.asarray(priorities, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"priorities must be a list of numbers: {exc}") from None
    if values.size != count:
        raise ValueError(f"got {values.size} priorities for {count} items; give one per item")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"priorities must be finite, got {values[~np.isfinite(values)][:5]}")
    if np.any(values < 0):
        raise ValueError(f"priorities must be >= 0, got {values[values < 0][:5]}")
    return values


def check_keys(keys: Sequence[int]) -> list[int]:
    """Return keys as a list of ints, refusing anything that is not an integer."""
    if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence | np.ndarray):
        raise TypeError(f"keys must be a list of ints, got {type(keys).__name__}")
    bad = [k for k in keys if isinstance(k, bool) or not isinstance(k, (int, np.integer))]
    if bad:
        raise TypeError(f"keys must be ints, got {bad[:5]}")
    return [int(k) for k in keys]


def check_timeout(timeout_s: float | None) -> float | None:
    """Return the timeout if it is None (wait forever) or a number >= 0."""
    if timeout_s is not None and not timeout_s >= 0:
        raise ValueError(f"timeout_s must be None or >= 0, got {timeout_s}")
    return timeout_s
