"""The Ray backend's bookkeeping: the service registry and the topic table.

Both live in one named Ray actor in the msagent namespace (``ControlActor``), so any process of
the job finds them, and start-up pays for one process, not two.
"""

from __future__ import annotations

import asyncio
from typing import Any

import ray

from msagent.runtime.spec import RegisterSpec


class RegistryActor:
    """Service name -> live instances (actor handles) and registered methods.

    Each instance runs a never-ending ``_ms_lifetime`` call; when it fails, the instance died
    and is dropped here, so that every caller's next refresh stops routing to it.
    """

    def __init__(self) -> None:
        self._specs: dict[str, dict[str, RegisterSpec]] = {}
        self._instances: dict[str, dict[str, Any]] = {}
        self._epochs: dict[str, int] = {}
        self._watches: set[asyncio.Task[None]] = set()

    async def claim(self, service: str, specs: dict[str, RegisterSpec]) -> bool:
        """Reserve a service name; False if live instances already serve it."""
        if self._instances.get(service):
            return False
        self._specs[service] = specs
        self._bump(service)
        return True

    async def add(self, service: str, instance_id: str, handle: Any) -> None:
        """Register a started instance and watch for its death."""
        self._instances.setdefault(service, {})[instance_id] = handle
        self._bump(service)
        task = asyncio.get_running_loop().create_task(self._watch(service, instance_id, handle))
        self._watches.add(task)
        task.add_done_callback(self._watches.discard)

    async def remove(self, service: str, instance_id: str, actor: str | None = None) -> None:
        """Stop routing to an instance (scaled down or found dead); with ``actor`` (its Ray
        actor id, hex), only if the instance registered under that id is still that actor."""
        found = self._instances.get(service, {}).get(instance_id)
        if found is None or (actor is not None and found._actor_id.hex() != actor):
            return
        del self._instances[service][instance_id]
        self._bump(service)

    async def lookup(self, service: str, known_epoch: int) -> tuple[int, Any, Any] | None:
        """(epoch, specs, [(id, handle)]) of a service, or None if ``known_epoch`` is current."""
        epoch = self._epochs.get(service, 0)
        if epoch == known_epoch:
            return None
        instances = list(self._instances.get(service, {}).items())
        return epoch, self._specs.get(service, {}), instances

    async def services(self) -> list[str]:
        """Names of services with live instances."""
        return sorted(name for name, insts in self._instances.items() if insts)

    async def _watch(self, service: str, instance_id: str, handle: Any) -> None:
        """Wait on the instance's lifetime call; drop the instance when it fails."""
        try:
            await handle._ms_lifetime.remote()
        except Exception:
            pass
        await self.remove(service, instance_id)

    def _bump(self, service: str) -> None:
        """Give a changed service a new epoch."""
        self._epochs[service] = self._epochs.get(service, 0) + 1


class TopicsActor:
    """Topic -> (version, [object ref]); the ref is boxed in a list so Ray does not resolve it."""

    def __init__(self) -> None:
        self._topics: dict[str, tuple[int, list[Any]]] = {}
        self._changed: dict[str, asyncio.Event] = {}

    async def publish(self, topic: str, boxed_ref: list[Any], at_least: int = 0) -> int:
        """Store a new value's ref under the next version (>= ``at_least``), wake waiters."""
        version = max(self._topics.get(topic, (0, []))[0] + 1, at_least)
        self._topics[topic] = (version, boxed_ref)
        self._event(topic).set()
        self._changed[topic] = asyncio.Event()
        return version

    async def latest(self, topic: str, known_version: int) -> tuple[int, list[Any]] | None:
        """The newest entry if newer than ``known_version``."""
        entry = self._topics.get(topic)
        return entry if entry is not None and entry[0] > known_version else None

    async def wait_newer(self, topic: str, version: int,
                         timeout_s: float | None) -> tuple[int, list[Any]] | None:
        """Wait until a version newer than ``version`` exists; None on timeout."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        while self._topics.get(topic, (0, []))[0] <= version:
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return None
            try:
                await asyncio.wait_for(self._event(topic).wait(), remaining)
            except asyncio.TimeoutError:
                return None
        return self._topics[topic]

    async def forget_topics(self) -> int:
        """Drop every topic (the backend is reused by another run); how many there were."""
        count = len(self._topics)
        self._topics.clear()
        return count

    def _event(self, topic: str) -> asyncio.Event:
        """The event set at the next publish on ``topic``."""
        return self._changed.setdefault(topic, asyncio.Event())


@ray.remote(num_cpus=0)
class ControlActor(RegistryActor, TopicsActor):
    """The registry and the topic table in one asyncio actor (one process fewer to start)."""

    def __init__(self) -> None:
        RegistryActor.__init__(self)
        TopicsActor.__init__(self)
