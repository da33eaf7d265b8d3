"""Removers: which item a full table evicts to make room for a new one."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from msagent.buffer.ordered_keys import OrderedKeys
from msagent.errors import ConfigError


class Remover(ABC):
    """Picks the eviction victim; told by the table of every key added or removed."""

    def __init__(self) -> None:
        self._order = OrderedKeys()

    def __len__(self) -> int:
        """Number of live keys."""
        return len(self._order)

    def add(self, keys: Sequence[int]) -> None:
        """Track new keys (in insertion order)."""
        self._order.add(keys)

    def remove(self, keys: Sequence[int]) -> None:
        """Forget keys that left the table for any reason."""
        self._order.discard(keys)

    @abstractmethod
    def select(self) -> int:
        """The key to evict next."""


class FifoRemover(Remover):
    """Evicts the oldest item (a sliding window over recent experience)."""

    def select(self) -> int:
        """The oldest live key."""
        return self._order.oldest()


class LifoRemover(Remover):
    """Evicts the newest item (keeps the earliest experience, drops fresh overflow)."""

    def select(self) -> int:
        """The newest live key."""
        return self._order.newest()


_REMOVERS: dict[str, type[Remover]] = {"fifo": FifoRemover, "lifo": LifoRemover}

REMOVER_KINDS = tuple(_REMOVERS)
"""Names accepted as ``TableConfig.remover``."""


def make_remover(kind: str) -> Remover:
    """Build a remover from its config name, so configs stay plain data."""
    if kind not in _REMOVERS:
        raise ConfigError(f"unknown remover kind {kind!r}; known kinds: {list(REMOVER_KINDS)}")
    return _REMOVERS[kind]()
