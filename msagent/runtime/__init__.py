"""The service runtime: ``register``, ``Solver``, ``launch``, publish/subscribe, backends.

Only this package imports Ray, and only when the Ray backend is used.
"""

from __future__ import annotations

from typing import Any

from msagent.runtime import state
from msagent.runtime.backend import Resources
from msagent.runtime.handle import ServiceHandle, ServiceRef, current_instance
from msagent.runtime.pubsub import Follower, Subscriber, follow, publish, subscribe
from msagent.runtime.solver import CallFuture, Solver, call
from msagent.runtime.spec import RegisterSpec, register, registered_methods
from msagent.runtime.state import init, shutdown


def launch(
    cls: type,
    num: int = 1,
    name: str | None = None,
    resources: Resources | dict[str, Any] | None = None,
    args: tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    wait: bool = True,
) -> ServiceHandle:
    """Start ``num`` instances of ``cls`` as a service and return a handle that scales it.

    Args:
        cls: A plain class with ``@register`` methods.
        num: How many instances to start.
        name: Service name (default: the class name); callers find instances by it.
        resources: Per-instance resources (``num_cpus``, ``num_gpus``, ``memory_mb``,
            ``custom``, ``spread``).
        args: Positional arguments of the constructor.
        kwargs: Keyword arguments of the constructor.
        wait: False returns while the instances are being built (on Ray, in parallel with
            other launches); call ``handle.wait_ready()`` before using the service.
    """
    if not registered_methods(cls):
        raise TypeError(f"{cls.__name__} has no @register methods; nothing to serve")
    return state.current().launch(cls, num, name or cls.__name__, Resources.of(resources),
                                  tuple(args), dict(kwargs or {}), wait)


def node_ip() -> str:
    """The address other nodes reach this process at: Ray's node IP inside a Ray process,
    else 127.0.0.1 (for rendezvous such as a learner group's)."""
    import sys

    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return ray.util.get_node_ip_address()
    return "127.0.0.1"


__all__ = [
    "CallFuture", "Follower", "RegisterSpec", "Resources", "ServiceHandle", "ServiceRef", "Solver",
    "call", "current_instance", "node_ip",
    "Subscriber", "follow", "init", "launch", "publish", "register", "shutdown", "subscribe",
]
