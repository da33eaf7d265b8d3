"""What a pull returns: one policy snapshot, decoded."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from msagent.vocabulary import ModelKey, Weights


@dataclass(frozen=True)
class Snapshot:
    """One stored version of a policy: its key, its weights and its metadata.

    ``metadata["frozen"]`` always says whether the snapshot is frozen (exempt from pruning).
    The arrays are fresh copies, so changing them changes nothing in the pool.
    """

    key: ModelKey
    weights: Weights
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def frozen(self) -> bool:
        """Whether pruning will keep this snapshot forever."""
        return bool(self.metadata.get("frozen", False))
