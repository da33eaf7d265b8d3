"""League snapshots kept in the run directory, one safetensors file per ModelKey.

A league's payoff table and matchmaking name frozen snapshots; an in-memory model pool forgets
them when the run ends, so each snapshot is also written here once (it never changes), and a
resumed run pushes the ones the league names back into the pool.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from safetensors.numpy import save as save_tensors

from msagent.rundir.atomic import atomic_write
from msagent.vocabulary import ModelKey

_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class SnapshotFiles:
    """Reads and writes snapshot weights under ``folder`` (``<policy>@<version>.safetensors``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def path(self, key: ModelKey) -> Path:
        """The file of snapshot ``key``."""
        return self.folder / f"{_SAFE.sub('_', key.policy_id)}@{int(key.version)}.safetensors"

    def save(self, key: ModelKey, weights: dict[str, np.ndarray]) -> Path:
        """Write ``key``'s weights once, atomically (an existing file is kept as it is)."""
        path = self.path(key)
        if not path.is_file():
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(path, save_tensors({k: np.ascontiguousarray(v)
                                             for k, v in weights.items()}))
        return path

    def delete(self, key: ModelKey) -> bool:
        """Remove ``key``'s file (a retired snapshot); whether there was one."""
        path = self.path(key)
        existed = path.is_file()
        path.unlink(missing_ok=True)
        return existed

    def load(self, key: ModelKey) -> dict[str, np.ndarray]:
        """The weights of snapshot ``key``."""
        return load_file(str(self.path(key)))

    def newest(self, policy_id: str, count: int) -> list[ModelKey]:
        """The keys of ``policy_id``'s newest ``count`` snapshot files, oldest first."""
        versions = sorted(int(p.stem.rsplit("@", 1)[1]) for p in
                          self.folder.glob(f"{_SAFE.sub('_', policy_id)}@*.safetensors"))
        return [ModelKey(policy_id, v) for v in versions[-count:]] if count > 0 else []

    def missing(self, keys: list[ModelKey]) -> list[ModelKey]:
        """The keys among ``keys`` that have no file."""
        return [k for k in keys if not self.path(k).is_file()]
