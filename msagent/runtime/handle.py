"""What ``launch`` returns: a named handle that scales the service and reports its stats."""

from __future__ import annotations

from typing import Any


class ServiceRef:
    """A service by name only: what a handle becomes when it is sent to another process."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        """Show the service name."""
        return f"ServiceRef({self.name!r})"


class ServiceHandle(ServiceRef):
    """Owns the instances of one launched service (base of the backends' handles)."""

    def scale(self, num: int) -> None:
        """Add or remove instances until ``num`` are running."""
        raise NotImplementedError

    @property
    def num_instances(self) -> int:
        """How many instances this handle runs."""
        raise NotImplementedError

    def stats(self) -> list[dict[str, Any]]:
        """Per-instance call counts, errors and batch sizes."""
        raise NotImplementedError

    def shutdown(self) -> None:
        """Stop every instance of the service."""
        self.scale(0)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        """Travel as a ServiceRef: other processes reach the service through the registry."""
        return (ServiceRef, (self.name,))


def check_num(num: int) -> int:
    """Validate an instance count."""
    if not isinstance(num, int) or isinstance(num, bool) or num < 0:
        raise ValueError(f"number of instances must be an int >= 0, got {num!r}")
    return num
