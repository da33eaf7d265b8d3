"""What a backend (inline or Ray) must provide to the Solver, launch and publish/subscribe."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from msagent.errors import ConfigError
from msagent.runtime.spec import RegisterSpec

if TYPE_CHECKING:
    from msagent.runtime.router import Router


class InstanceGone(Exception):
    """Internal: the instance a call was sent to is dead (the router drops it)."""


@dataclass
class Resources:
    """Where and with what an instance runs (Ray actor options; ignored inline).

    Attributes:
        num_cpus: CPUs reserved per instance. 0 by default: instances share the machine's
            cores (a Ray actor otherwise holds a whole CPU for its lifetime, so a 2-core
            machine would fit only two instances).
        num_gpus: GPUs reserved per instance.
        memory_mb: Memory reserved per instance.
        custom: Custom Ray resources, e.g. ``{"node:learner": 1}``.
        spread: Place instances on as many nodes as possible.
    """

    num_cpus: float = 0.0
    num_gpus: float = 0.0
    memory_mb: int | None = None
    custom: dict[str, float] = field(default_factory=dict)
    spread: bool = False

    @classmethod
    def of(cls, value: Resources | dict[str, Any] | None) -> Resources:
        """Accept a Resources, a dict of its fields, or None; a bad key is a clear error."""
        if value is None:
            return cls()
        if isinstance(value, Resources):
            return value
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"unknown resource key(s) {sorted(unknown)}; "
                              f"known: {sorted(cls.__dataclass_fields__)}")
        return cls(**value)


@dataclass
class Route:
    """One live instance as a caller sees it; ``outstanding`` drives load balancing."""

    instance_id: str
    target: Any
    outstanding: int = 0
    methods: dict[str, Any] = field(default_factory=dict)
    channel: Any = None
    """Ray: the instance's direct channel (address, key); False: none; None: not asked yet."""


@dataclass
class ServiceView:
    """A snapshot of a service in the registry: its methods and its live instances."""

    epoch: int
    specs: dict[str, RegisterSpec]
    instances: list[tuple[str, Any]]


class RouteTable:
    """A backend's routers, one per service, shared by every Solver of the process: they live
    on the backend, so a new backend starts with none and no module holds a global table."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routers: dict[str, Router] = {}

    def get(self, service: str, make: Callable[[str], Router]) -> Router:
        """The service's router, built by ``make(service)`` on first use (``make``, because
        the router module imports this one)."""
        with self._lock:
            router = self._routers.get(service)
            if router is None:
                router = self._routers[service] = make(service)
            return router

    def forget(self, service: str) -> None:
        """Drop one service's router (its instances changed under the callers)."""
        with self._lock:
            self._routers.pop(service, None)

    def clear(self) -> None:
        """Drop every router (at shutdown, or when a test reuses the backend)."""
        with self._lock:
            self._routers.clear()


class Backend(ABC):
    """The operations msagent needs from an execution engine."""

    name: str = "abstract"

    def __init__(self) -> None:
        self.routes = RouteTable()

    @abstractmethod
    def launch(self, cls: type, num: int, name: str, resources: Resources,
               args: tuple[Any, ...], kwargs: dict[str, Any], wait: bool = True) -> Any:
        """Start ``num`` instances of ``cls`` under ``name`` and return a ServiceHandle.

        ``wait=False`` may return before the instances are built; ``wait_ready`` waits.
        """

    @abstractmethod
    def lookup(self, service: str, known_epoch: int) -> ServiceView | None:
        """The service's current view, None if unchanged since ``known_epoch``."""

    @abstractmethod
    def services(self) -> list[str]:
        """Names of the services that have registered."""

    @abstractmethod
    def call(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any], direct: bool = False) -> Any:
        """Call and wait; raise InstanceGone if the instance is dead.

        ``direct``: the method was registered ``direct=True`` (a backend may use a faster
        channel to same-node instances).
        """

    @abstractmethod
    def submit(self, route: Route, method: str, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
        """Call without waiting; return a token for ``resolve``."""

    @abstractmethod
    def resolve(self, token: Any, timeout_s: float | None) -> Any:
        """Wait for a submitted call; raise InstanceGone if its instance died."""

    @abstractmethod
    def fire(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> None:
        """Send a fire-and-forget call."""

    @abstractmethod
    def report_dead(self, service: str, instance_id: str, target: Any = None) -> None:
        """Tell the registry an instance is dead so that every caller stops routing to it
        (``target``: the instance as the caller knew it; a newer instance under the same id,
        started since, is not the dead one and stays)."""

    @abstractmethod
    def publish(self, topic: str, value: Any, at_least: int = 0) -> int:
        """Store a value once under a topic and return its new version (>= ``at_least``)."""

    @abstractmethod
    def topic_latest(self, topic: str, known_version: int,
                     fetch: bool = True) -> tuple[int, Any] | None:
        """The newest (version, value) if newer than ``known_version``, else None.

        ``fetch=False`` returns (version, None): for callers that only need the version.
        """

    @abstractmethod
    def topic_wait(self, topic: str, version: int, timeout_s: float | None,
                   fetch: bool = True) -> tuple[int, Any] | None:
        """Block until a version newer than ``version`` exists; None on timeout."""

    @abstractmethod
    def forget_topics(self) -> int:
        """Drop every published topic, so that a later run on this backend (a notebook's, a
        test session's) cannot adopt an earlier run's parameters; how many there were."""

    @abstractmethod
    def shutdown(self) -> None:
        """Stop every instance this backend started."""
