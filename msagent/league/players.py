"""The league's members as plain data: trainable players and their frozen snapshots.

A player holds no payoff and no behaviour; its role (see :mod:`msagent.league.roles`) decides
what it plays and when it is snapshotted or reset.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from msagent.vocabulary import ModelKey, PolicyId, PolicyRef


@dataclass
class Player:
    """A trainable member of the league.

    Attributes:
        id: The policy id (its newest parameters are ``PolicyRef.player(id)``).
        role: ``"main"``, ``"main_exploiter"`` or ``"league_exploiter"``.
        parent: Participant id of the snapshot it continues from (its newest snapshot, or the one
            it was reset to); None before its first snapshot.
        snapshots: Versions snapshotted so far, oldest first.
        updates_at_snapshot: The learner's update count at the newest snapshot.
        resets: How many times it was reset.
    """

    id: PolicyId
    role: str
    parent: str | None = None
    snapshots: list[int] = field(default_factory=list)
    updates_at_snapshot: int = 0
    resets: int = 0

    @property
    def ref(self) -> PolicyRef:
        """The ref of its newest parameters."""
        return PolicyRef.player(self.id)

    def first_snapshot(self) -> PolicyRef | None:
        """The ref of its first snapshot (its initial parameters), None before any."""
        if not self.snapshots:
            return None
        return PolicyRef.snapshot(ModelKey(self.id, self.snapshots[0]))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Player:
        """The player :meth:`to_dict` described."""
        return cls(**{**data, "snapshots": [int(v) for v in data["snapshots"]]})


@dataclass(frozen=True)
class Historical:
    """A frozen snapshot taking part in the league.

    Attributes:
        ref: Its ref (kind snapshot); ``str(ref)`` is its participant id.
        owner: Id of the player it was taken from.
        role: The owner's role when it was taken.
        parent: Participant id of the snapshot its owner continued from when it was taken.
        created_s: Wall-clock time it was added.
    """

    ref: PolicyRef
    owner: PolicyId
    role: str
    parent: str | None
    created_s: float

    @property
    def id(self) -> str:
        """Its participant id (``owner:version``)."""
        return str(self.ref)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (the ref as its participant id)."""
        return {"ref": str(self.ref), "owner": self.owner, "role": self.role,
                "parent": self.parent, "created_s": self.created_s}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Historical:
        """The snapshot :meth:`to_dict` described."""
        return cls(PolicyRef.parse(data["ref"]), data["owner"], data["role"], data["parent"],
                   float(data["created_s"]))
