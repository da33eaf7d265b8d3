"""Keys kept in insertion order, with O(1) access to the oldest and newest and O(1) removal."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable


class OrderedKeys:
    """The set of live keys in insertion order (shared by FIFO/LIFO samplers and removers)."""

    def __init__(self) -> None:
        self._keys: OrderedDict[int, None] = OrderedDict()

    def __len__(self) -> int:
        """Number of live keys."""
        return len(self._keys)

    def add(self, keys: Iterable[int]) -> None:
        """Append keys as the newest ones."""
        for key in keys:
            self._keys[int(key)] = None

    def discard(self, keys: Iterable[int]) -> None:
        """Forget keys, ignoring those not present."""
        for key in keys:
            self._keys.pop(int(key), None)

    def oldest(self) -> int:
        """The key added first among the live ones."""
        self._require()
        return next(iter(self._keys))

    def newest(self) -> int:
        """The key added last among the live ones."""
        self._require()
        return next(reversed(self._keys))

    def _require(self) -> None:
        """Refuse to pick from an empty set, with an error that says so."""
        if not self._keys:
            raise LookupError("no keys to choose from: the table is empty")
