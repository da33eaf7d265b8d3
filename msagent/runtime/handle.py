"""What ``launch`` returns: a named handle that scales the service and reports its stats."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

Method = Callable[..., Any] | str
"""A service method as callers name it: the method itself (``Learner.stats``, or a Protocol's
for a handle of several classes), or, inside the runtime, its name."""


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

    def call_all(self, method: Method, *args: Any, **kwargs: Any) -> list[Any]:
        """Call a registered method on every instance (start, stop, drain...); results in order."""
        raise NotImplementedError

    def call_each(self, method: Method, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Call ``method`` on every live instance; results by instance id (dead ones left out)."""
        raise NotImplementedError

    def call_some(self, instance_ids: list[str], method: Method, *args: Any,
                  **kwargs: Any) -> dict[str, Any]:
        """``call_each`` restricted to the given instances (e.g. to start a replacement)."""
        raise NotImplementedError

    def reap(self) -> list[str]:
        """Forget the instances whose process died since the last call; return their ids."""
        return []

    def remove(self, instance_ids: list[str]) -> None:
        """Stop the given instances at once."""
        raise NotImplementedError

    def grow(self, count: int) -> list[str]:
        """Start ``count`` more instances (fresh ids, so fresh seeds); return their ids."""
        raise NotImplementedError

    def instance_ids(self) -> list[str]:
        """Ids of the instances this handle runs, e.g. ``["EnvWorker#0", "EnvWorker#1"]``."""
        raise NotImplementedError

    def placements(self) -> list[dict[str, Any]]:
        """Where each instance runs: ``{"instance", "node", "ip", "pid"}`` (inline: here)."""
        import os
        import socket

        return [{"instance": iid, "node": "local", "ip": socket.gethostname(),
                 "pid": os.getpid()} for iid in self.instance_ids()]

    def wait_ready(self) -> None:
        """Wait until the instances a ``launch(..., wait=False)`` started are built and
        routable; raise the constructor's error if one failed (nothing to wait for inline)."""

    def shutdown(self) -> None:
        """Stop every instance of the service."""
        self.scale(0)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        """Travel as a ServiceRef: other processes reach the service through the registry."""
        return (ServiceRef, (self.name,))


_constructing: list[tuple[str, int]] = []


def current_instance() -> tuple[str, int]:
    """(service name, instance index) of the instance being constructed, from its __init__.

    Lets instances of one service differ, e.g. seed their environments differently.
    """
    if not _constructing:
        raise RuntimeError("current_instance() is only known inside a service constructor")
    return _constructing[-1]


def construct(cls: type, service: str, instance_id: str, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
    """Build a user object, making ``current_instance()`` answer inside its constructor."""
    _constructing.append((service, int(instance_id.rsplit("#", 1)[1])))
    try:
        return cls(*args, **kwargs)
    finally:
        _constructing.pop()


def check_num(num: int) -> int:
    """Validate an instance count."""
    if not isinstance(num, int) or isinstance(num, bool) or num < 0:
        raise ValueError(f"number of instances must be an int >= 0, got {num!r}")
    return num


def method_name(cls: type, service: str, method: Method) -> str:
    """The name a handle's call sends, checked: a method object must be the service class's
    own (or inherited) or a Protocol's, so that a method of another service fails here, naming
    both, and a renamed one fails at import; a name (the runtime's own calls) passes as is."""
    if isinstance(method, str):
        return method
    name = getattr(method, "__name__", None)
    if not callable(method) or not isinstance(name, str):
        raise TypeError(f"pass a service method (e.g. {cls.__name__}.<method>), got {method!r}")
    if any(vars(k).get(name) is method for k in cls.__mro__) or _is_protocol(_owner(method)):
        return name
    raise TypeError(f"{method.__qualname__} is not a method of service {service!r} (class "
                    f"{cls.__name__}); pass one of its methods, or a Protocol's that it serves")


def _owner(method: Callable[..., Any]) -> Any:
    """The class that defines ``method``, found by its module and qualified name (None for a
    class defined inside a function)."""
    owner: Any = sys.modules.get(getattr(method, "__module__", ""))
    for part in method.__qualname__.split(".")[:-1]:
        owner = getattr(owner, part, None)
    return owner


def _is_protocol(owner: Any) -> bool:
    """Whether ``owner`` is a ``typing.Protocol`` class (one that lists Protocol as a base,
    as typing itself decides; ``typing.is_protocol`` needs Python 3.13)."""
    return isinstance(owner, type) and Protocol in owner.__bases__
