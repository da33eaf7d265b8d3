"""The in-memory store with a memory budget for frozen snapshots; the rest live in files.

A league freezes a snapshot of each learning player every few minutes and keeps it for good
(the payoff table and matchmaking name it). In memory, that grows the pool without bound: a
Connect Four league of an hour holds about 200 frozen snapshots. This store keeps the weights
of the most recently used frozen snapshots up to ``max_bytes`` in memory and writes the others,
once, to files in ``folder``, read back when pulled (env workers cache the opponents they play,
so a pull is a cache miss). Snapshots that are not frozen are never spilled: pruning bounds
them, and the newest are the hottest.

The files are a cache of this process's memory, not a record: a new store clears the ones a
previous store left, and a resumed run pushes its snapshots back from the run directory.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

from msagent.model_pool.stores.base import StoredSnapshot
from msagent.model_pool.stores.memory import MemoryStore
from msagent.vocabulary import ModelKey

log = logging.getLogger(__name__)

SPILL_SUFFIX = ".spilled.safetensors"
"""Suffix of the files this store writes (with ``.tmp`` while written: the only files it
ever deletes)."""


class SpillingMemoryStore(MemoryStore):
    """A MemoryStore that keeps at most ``max_bytes`` of frozen snapshots' weights in memory.

    Args:
        folder: Where spilled weights go (created; stale spill files in it are deleted).
        max_bytes: Weight bytes of frozen snapshots kept in memory, the most recently used.
    """

    def __init__(self, folder: Path, max_bytes: int) -> None:
        super().__init__()
        self._lock = threading.RLock()  # the overrides below call MemoryStore's locked methods
        self.folder, self.max_bytes = Path(folder), int(max_bytes)
        self.folder.mkdir(parents=True, exist_ok=True)
        for stale in self.folder.glob(f"*{SPILL_SUFFIX}*"):  # and half-written .tmp files
            stale.unlink(missing_ok=True)
        self._resident: OrderedDict[ModelKey, int] = OrderedDict()  # least recently used first
        self._spilled: set[ModelKey] = set()

    def put(self, key: ModelKey, snapshot: StoredSnapshot) -> None:
        """Store a snapshot; a frozen one counts against the budget."""
        with self._lock:
            super().put(key, snapshot)
            if snapshot.frozen:
                self._admit(key, len(snapshot.weights))

    def freeze(self, key: ModelKey) -> bool:
        """Mark a snapshot frozen; from now on it counts against the budget."""
        with self._lock:
            if not super().freeze(key):
                return False
            if key not in self._resident and key not in self._spilled:
                self._admit(key, len(self._snapshots[key.policy_id][key.version].weights))
            return True

    def get(self, key: ModelKey) -> StoredSnapshot | None:
        """Read a snapshot, its weights from its file when it was spilled."""
        with self._lock:
            stored = super().get(key)
            if stored is None or key not in self._spilled:
                if key in self._resident:
                    self._resident.move_to_end(key)
                return stored
            return replace(stored, weights=self._path(key).read_bytes())

    def delete(self, key: ModelKey) -> bool:
        """Delete one snapshot, its spill file too."""
        with self._lock:
            self._resident.pop(key, None)
            if key in self._spilled:
                self._spilled.discard(key)
                self._path(key).unlink(missing_ok=True)
            return super().delete(key)

    def memory_bytes(self) -> int:
        """Weight bytes of the frozen snapshots held in memory."""
        with self._lock:
            return sum(self._resident.values())

    def spilled(self) -> int:
        """How many frozen snapshots live in files."""
        with self._lock:
            return len(self._spilled)

    def _admit(self, key: ModelKey, size: int) -> None:
        """Count a frozen snapshot as resident, then spill the least recently used ones
        until the budget holds (the newest one stays even if it alone is over it)."""
        self._resident[key] = size
        total = sum(self._resident.values())
        while total > self.max_bytes and len(self._resident) > 1:
            old = next(iter(self._resident))
            try:
                self._spill(old)
            except OSError as exc:  # disk full or gone: stay over budget rather than fail
                log.warning("model pool: could not spill snapshot %s to %s (%s); keeping it "
                            "in memory", old, self.folder, exc)
                return
            total -= self._resident.pop(old)

    def _spill(self, key: ModelKey) -> None:
        """Write a snapshot's weights to its file and drop them from memory."""
        by_version = self._snapshots[key.policy_id]
        stored = by_version[key.version]
        path = self._path(key)
        temp = path.with_name(path.name + ".tmp")
        temp.write_bytes(stored.weights)
        temp.replace(path)  # a reader never sees half a file
        by_version[key.version] = replace(stored, weights=b"")
        self._spilled.add(key)

    def _path(self, key: ModelKey) -> Path:
        """The spill file of a snapshot (policy ids are free text: hex keeps names safe)."""
        return self.folder / f"{key.policy_id.encode().hex()}@{int(key.version)}{SPILL_SUFFIX}"

    def __repr__(self) -> str:
        """Show the folder and the budget."""
        return f"SpillingMemoryStore({str(self.folder)!r}, max_bytes={self.max_bytes})"
