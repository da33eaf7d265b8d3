"""The inline backend: every service in this process, threads for batching and async calls."""

from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from msagent.errors import ErrorInfo, MsagentError
from msagent.runtime.backend import Backend, Resources, Route, ServiceView
from msagent.runtime.core import InstanceCore
from msagent.runtime.handle import Method, ServiceHandle, check_num, construct, method_name
from msagent.runtime.spec import registered_methods
from msagent.runtime.threads import pin_torch_threads
from msagent.runtime.topics import TopicTable


class _Instance:
    """One in-process instance: its core and a one-thread queue for fire-and-forget calls."""

    def __init__(self, core: InstanceCore) -> None:
        self.core = core
        self.fire_queue = ThreadPoolExecutor(1, thread_name_prefix=f"fire:{core.instance_id}")


class InlineHandle(ServiceHandle):
    """Instances of one service living in this process."""

    def __init__(self, backend: InlineBackend, cls: type, name: str,
                 args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        super().__init__(name)
        self._backend, self._cls, self._args, self._kwargs = backend, cls, args, kwargs
        self._instances: list[_Instance] = []
        self._ids = itertools.count()

    def scale(self, num: int) -> None:
        """Create or drop instances until ``num`` run."""
        while len(self._instances) < check_num(num):
            iid = f"{self.name}#{next(self._ids)}"
            try:
                obj = construct(self._cls, self.name, iid, self._args, self._kwargs)
            except Exception as exc:  # the same error, worded the same, as on Ray
                raise ErrorInfo.of(exc).rebuild(
                    f"an instance of service {self.name!r} failed to start") from exc
            self._instances.append(_Instance(InstanceCore(obj, self.name, iid)))
        removed = []
        while len(self._instances) > num:
            removed.append(self._instances.pop())
        self._backend.set_instances(self.name, self._cls, list(self._instances))
        if removed:  # every caller is in this process: make them see the change at once
            self._backend.routes.forget(self.name)
        for inst in removed:
            inst.fire_queue.shutdown(wait=True)

    @property
    def num_instances(self) -> int:
        """How many instances run."""
        return len(self._instances)

    def call_each(self, method: Method, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Call ``method`` on every instance; results by instance id."""
        return self.call_some(self.instance_ids(), method, *args, **kwargs)

    def call_some(self, instance_ids: list[str], method: Method, *args: Any,
                  **kwargs: Any) -> dict[str, Any]:
        """Call ``method`` on the given instances (fire-and-forget ones are queued)."""
        method = method_name(self._cls, self.name, method)
        out: dict[str, Any] = {}
        for inst in [i for i in self._instances if i.core.instance_id in instance_ids]:
            if inst.core.spec(method).response:
                out[inst.core.instance_id] = inst.core.invoke(method, args, kwargs)
            else:
                inst.fire_queue.submit(inst.core.invoke_logged, method, args, kwargs)
                out[inst.core.instance_id] = None
        return out

    def remove(self, instance_ids: list[str]) -> None:
        """Drop the given instances (their threads end with their own loops)."""
        kept = [i for i in self._instances if i.core.instance_id not in instance_ids]
        removed = [i for i in self._instances if i.core.instance_id in instance_ids]
        self._instances = kept
        self._backend.set_instances(self.name, self._cls, list(kept))
        self._backend.routes.forget(self.name)
        for inst in removed:
            inst.fire_queue.shutdown(wait=False)

    def grow(self, count: int) -> list[str]:
        """Start ``count`` more instances; return their ids."""
        before = set(self.instance_ids())
        self.scale(len(self._instances) + count)
        return [iid for iid in self.instance_ids() if iid not in before]

    def instance_ids(self) -> list[str]:
        """Ids of the instances."""
        return [i.core.instance_id for i in self._instances]

    def stats(self) -> list[dict[str, Any]]:
        """Per-instance stats."""
        return [inst.core.stats() for inst in self._instances]

    def call_all(self, method: Method, *args: Any, **kwargs: Any) -> list[Any]:
        """Call ``method`` on every instance (fire-and-forget ones are queued, not awaited)."""
        method = method_name(self._cls, self.name, method)
        out = []
        for inst in self._instances:
            if inst.core.spec(method).response:
                out.append(inst.core.invoke(method, args, kwargs))
            else:
                inst.fire_queue.submit(inst.core.invoke_logged, method, args, kwargs)
                out.append(None)
        return out


class InlineBackend(Backend):
    """Runs services as plain objects in this process (debugging, fast unit tests)."""

    name = "inline"

    def __init__(self, torch_threads: int = 1) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._services: dict[str, tuple[int, type, list[_Instance]]] = {}
        self._epochs = itertools.count(1)
        self._pool = ThreadPoolExecutor(64, thread_name_prefix="msagent-async")
        self._topics = TopicTable()
        self._torch_threads = torch_threads

    def launch(self, cls: type, num: int, name: str, resources: Resources,
               args: tuple[Any, ...], kwargs: dict[str, Any], wait: bool = True) -> InlineHandle:
        """Create ``num`` instances in this process (always at once: ``wait`` changes nothing)."""
        pin_torch_threads(self._torch_threads)
        if self._services.get(name, (0, None, []))[2]:  # a name scaled to 0 is free again
            raise MsagentError(f"a service named {name!r} is already running")
        handle = InlineHandle(self, cls, name, args, kwargs)
        handle.scale(num)
        return handle

    def set_instances(self, name: str, cls: type, instances: list[_Instance]) -> None:
        """Record a service's instances under a new epoch."""
        with self._lock:
            self._services[name] = (next(self._epochs), cls, instances)

    def lookup(self, service: str, known_epoch: int) -> ServiceView | None:
        """The service's instances, or None if unchanged."""
        with self._lock:
            epoch, cls, instances = self._services.get(service, (0, None, []))
        if epoch == known_epoch:
            return None
        specs = registered_methods(cls) if cls is not None else {}
        return ServiceView(epoch, specs, [(i.core.instance_id, i) for i in instances])

    def services(self) -> list[str]:
        """Services with at least one instance."""
        with self._lock:
            return [n for n, (_, _, insts) in self._services.items() if insts]

    def call(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any], direct: bool = False) -> Any:
        """Run the call in the caller's thread (every call is direct here)."""
        return route.target.core.invoke(method, args, kwargs)

    def submit(self, route: Route, method: str, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Future[Any]:
        """Run the call on the shared thread pool."""
        return self._pool.submit(route.target.core.invoke, method, args, kwargs)

    def resolve(self, token: Future[Any], timeout_s: float | None) -> Any:
        """Wait for a submitted call."""
        return token.result(timeout_s)

    def fire(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> None:
        """Queue the call on the instance's own thread, in order."""
        route.target.core.spec(method)
        route.target.fire_queue.submit(route.target.core.invoke_logged, method, args, kwargs)

    def report_dead(self, service: str, instance_id: str, target: Any = None) -> None:
        """Inline instances do not die on their own."""

    def publish(self, topic: str, value: Any, at_least: int = 0) -> int:
        """Store the value (by reference) under a new version."""
        return self._topics.publish(topic, value, at_least)

    def topic_latest(self, topic: str, known_version: int,
                     fetch: bool = True) -> tuple[int, Any] | None:
        """The newest (version, value) if newer."""
        return self._topics.latest(topic, known_version)

    def topic_wait(self, topic: str, version: int, timeout_s: float | None,
                   fetch: bool = True) -> tuple[int, Any] | None:
        """Block until a newer version exists."""
        return self._topics.wait_newer(topic, version, timeout_s)

    def forget_topics(self) -> int:
        """Drop every published topic; how many there were."""
        return self._topics.forget()

    def shutdown(self) -> None:
        """Forget every service; stop the thread pools."""
        with self._lock:
            for _, _, instances in self._services.values():
                for inst in instances:
                    inst.fire_queue.shutdown(wait=False)
            self._services.clear()
        self._pool.shutdown(wait=False)
