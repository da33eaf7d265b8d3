"""Errors the model pool raises on purpose, so callers can catch them by kind."""

from __future__ import annotations

from msagent.errors import MsagentError
from msagent.vocabulary import ModelKey, Version


class SnapshotNotFoundError(MsagentError, KeyError):
    """No snapshot is stored under the requested key (never pushed, or pruned)."""

    def __init__(self, policy_id: str, version: Version | None, available: list[Version]) -> None:
        """Remember what was asked and what exists, so the message can say both.

        Args:
            policy_id: The policy that was asked for.
            version: The version that was asked for; None when "the latest" was asked for.
            available: The versions of that policy that the pool holds now.
        """
        self.policy_id = policy_id
        self.version = version
        self.available = sorted(available)
        super().__init__(self._describe())

    def _describe(self) -> str:
        """Build the message that names the policy, the version and what exists."""
        if self.version is None:
            wanted = f"latest snapshot of policy {self.policy_id!r}"
        else:
            wanted = f"snapshot {ModelKey(self.policy_id, self.version)}"
        if not self.available:
            return f"no {wanted} in the model pool: policy {self.policy_id!r} has no snapshots"
        return (
            f"no {wanted} in the model pool: policy {self.policy_id!r} has versions "
            f"{_ranges(self.available)} (older ones may have been pruned)"
        )

    def __str__(self) -> str:
        """Show the message as written (KeyError would otherwise quote it)."""
        return str(self.args[0])


class InvalidWeightsError(MsagentError, TypeError):
    """Weights are not a name -> numpy array mapping that safetensors can store."""


class InvalidMetadataError(MsagentError, TypeError):
    """Metadata holds something other than plain values (dict, list, str, number, bool, None, bytes)."""


class InvalidPolicyIdError(MsagentError, ValueError):
    """A policy id is empty or not a string."""


def _ranges(versions: list[Version]) -> str:
    """Render sorted versions compactly, e.g. ``[1, 5-9, 12]``, so long histories stay readable."""
    parts: list[str] = []
    start = prev = versions[0]
    for v in [*versions[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return "[" + ", ".join(parts) + "]"
