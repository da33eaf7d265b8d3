"""A launched service on Ray: the generated actor class and the handle that scales it."""

from __future__ import annotations

import itertools
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from msagent.errors import ErrorInfo, MethodNotRegisteredError
from msagent.runtime.backend import InstanceGone, Resources
from msagent.runtime.core import InstanceCore
from msagent.runtime.handle import Method, ServiceHandle, check_num, construct, method_name
from msagent.runtime.router import REFRESH_S
from msagent.runtime.spec import RegisterSpec, registered_methods
from msagent.runtime.threads import pin_torch_threads

if TYPE_CHECKING:
    from msagent.runtime.ray_backend import RayBackend

log = logging.getLogger("msagent.runtime")
_channel_lock = threading.Lock()
DRAIN_S = 5.0
"""How long a removed instance may finish its calls in flight before it is killed."""


def ray_module() -> Any:
    """Import Ray lazily (so that the inline backend never loads it)."""
    import ray

    return ray


class ServiceActorBase:
    """The body of every service actor: builds the user object and serves its methods."""

    def __init__(self, cls: type, call: tuple[tuple[Any, ...], dict[str, Any]], service: str,
                 instance_id: str, namespace: str, torch_threads: int, log_file: str | None,
                 attach: Callable[[str, int, str | None], None]) -> None:
        """``attach`` installs a Ray backend in this process: the Ray backend passes its own
        (this module cannot import it: it imports this one)."""
        pin_torch_threads(torch_threads)
        attach(namespace, torch_threads, log_file)
        self._init_error: ErrorInfo | None = None
        try:
            obj = construct(cls, service, instance_id, call[0], call[1])
        except Exception as exc:  # reported by _ms_ready as plain data, not Ray's traceback
            self._init_error = ErrorInfo.of(exc)
            return
        self._core = InstanceCore(obj, service, instance_id)
        pin_torch_threads(torch_threads)

    def _ms_ready(self) -> dict[str, Any]:
        """Where this instance runs, and its constructor's error if it failed."""
        ray = ray_module()
        return {"pid": os.getpid(), "node": ray.get_runtime_context().get_node_id(),
                "error": self._init_error}

    def _ms_stats(self) -> dict[str, Any]:
        """Calls, errors and batch sizes."""
        return self._core.stats()

    def _ms_channel(self) -> dict[str, Any]:
        """This instance's direct channel (started on first ask; None where there is none)
        and its node."""
        from msagent.runtime.channel_server import serve_channel

        with _channel_lock:
            if not hasattr(self, "_channel"):
                self._channel = serve_channel(self._core)
        ray, channel = ray_module(), self._channel
        return {"node": ray.get_runtime_context().get_node_id(),
                "address": channel.address if channel else None,
                "key": channel.key if channel else None}

    def _ms_lifetime(self) -> None:
        """Never returns: the registry watches this call to learn of the instance's death."""
        threading.Event().wait()

    def _ms_drain(self, timeout_s: float) -> None:
        """Return once no registered call runs (or after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while self._core.inflight and time.monotonic() < deadline:
            time.sleep(0.01)


def _service_method(name: str, spec: RegisterSpec) -> Any:
    """An actor method that forwards to the instance core, in the right concurrency group."""
    ray = ray_module()

    def method(self: ServiceActorBase, *args: Any, **kwargs: Any) -> Any:
        if spec.response:
            return self._core.invoke(name, args, kwargs)
        return self._core.invoke_logged(name, args, kwargs)

    method.__name__ = method.__qualname__ = name
    group = "batch" if spec.batch > 1 else "concurrent" if spec.concurrent else None
    return ray.method(concurrency_group=group)(method) if group else method


def actor_class(cls: type, specs: dict[str, RegisterSpec]) -> Any:
    """Generate the Ray actor class for a user class: one actor method per registered one.

    Plain methods run one at a time in Ray's default group (actor semantics); batched ones get
    a thread per waiting caller so that callers from any process can be gathered.
    """
    ray = ray_module()
    body: dict[str, Any] = {n: _service_method(n, s) for n, s in specs.items()}
    for control in ("_ms_ready", "_ms_stats", "_ms_lifetime", "_ms_drain", "_ms_channel"):
        body[control] = ray.method(concurrency_group="control")(
            getattr(ServiceActorBase, control))
    batch_slots = sum(2 * s.batch for s in specs.values() if s.batch > 1)
    groups = {"control": 8, "concurrent": 64, "batch": max(batch_slots, 1)}
    generated = type(f"{cls.__name__}Service", (ServiceActorBase,), body)
    return ray.remote(concurrency_groups=groups)(generated)


class RayHandle(ServiceHandle):
    """The actors of one service; scales by starting or draining and killing actors."""

    def __init__(self, backend: RayBackend, cls: type, name: str, resources: Resources,
                 call: tuple[tuple[Any, ...], dict[str, Any]]) -> None:
        super().__init__(name)
        self.specs = registered_methods(cls)
        self._backend, self._cls, self._resources, self._call = backend, cls, resources, call
        self._actor_cls = actor_class(cls, self.specs)
        self._actors: list[tuple[str, Any]] = []
        self._starting: list[tuple[str, Any]] = []
        self._lifetimes: dict[str, Any] = {}
        self._mutex = threading.RLock()
        self._ids = itertools.count()

    def scale(self, num: int) -> None:
        """Start or stop actors until ``num`` run; new ones are routable when this returns."""
        check_num(num)
        if num > len(self._actors):
            self._grow(num - len(self._actors))
        elif num < len(self._actors):
            victims, self._actors = self._actors[num:], self._actors[:num]
            self._stop(victims)

    @property
    def num_instances(self) -> int:
        """How many actors run."""
        return len(self._actors)

    def stats(self) -> list[dict[str, Any]]:
        """Per-instance stats (dead instances are skipped)."""
        ray = self._backend._ray
        refs = [actor._ms_stats.remote() for _, actor in self._actors]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=10)
        out = []
        for ref in ready:
            try:
                out.append(ray.get(ref))
            except ray.exceptions.RayActorError:
                continue
        return out

    def call_all(self, method: Method, *args: Any, **kwargs: Any) -> list[Any]:
        """Call ``method`` on every actor; fire-and-forget ones are sent, not awaited."""
        ray = self._backend._ray
        method = self._check_method(method)
        refs = [getattr(actor, method).remote(*args, **kwargs) for _, actor in self._actors]
        if not self.specs[method].response:
            return [None] * len(refs)
        try:
            return ray.get(refs)
        except ray.exceptions.RayActorError as exc:  # the runtime's error, not Ray's
            raise InstanceGone(f"an instance of service {self.name} died during "
                               f"{method}: {str(exc).splitlines()[0] if str(exc) else exc!r}"
                               ) from None

    def call_each(self, method: Method, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Call ``method`` on every live actor; results by instance id. An actor found dead
        is left out (``reap`` reports it), so one death does not fail the whole call."""
        return self.call_some(self.instance_ids(), method, *args, **kwargs)

    def call_some(self, instance_ids: list[str], method: Method, *args: Any,
                  **kwargs: Any) -> dict[str, Any]:
        """``call_each`` restricted to some instances (fire-and-forget ones are not awaited)."""
        ray = self._backend._ray
        method = self._check_method(method)
        with self._mutex:
            actors = [(iid, a) for iid, a in self._actors if iid in instance_ids]
        refs = {iid: getattr(actor, method).remote(*args, **kwargs) for iid, actor in actors}
        if not self.specs[method].response:
            return dict.fromkeys(refs)
        out = {}
        for iid, ref in refs.items():
            try:
                out[iid] = ray.get(ref)
            except ray.exceptions.RayActorError:
                continue
        return out

    def reap(self) -> list[str]:
        """Forget the actors whose process died since the last call; return their ids."""
        ray = self._backend._ray
        if not self._lifetimes:
            return []
        with self._mutex:
            lifetimes = dict(self._lifetimes)
        ended, _ = ray.wait(list(lifetimes.values()), num_returns=len(lifetimes), timeout=0)
        dead = [iid for iid, ref in lifetimes.items() if ref in ended]
        with self._mutex:
            for iid in dead:
                self._lifetimes.pop(iid, None)
            self._actors = [(iid, a) for iid, a in self._actors if iid not in dead]
        return dead

    def remove(self, instance_ids: list[str]) -> None:
        """Kill the given instances at once (e.g. a worker whose loop failed)."""
        ray = self._backend._ray
        with self._mutex:
            victims = [(iid, a) for iid, a in self._actors if iid in instance_ids]
            self._actors = [(iid, a) for iid, a in self._actors if iid not in instance_ids]
        ray.get([self._backend.registry.remove.remote(self.name, iid) for iid, _ in victims])
        for iid, actor in victims:
            self._lifetimes.pop(iid, None)
            ray.kill(actor)

    def grow(self, count: int) -> list[str]:
        """Start ``count`` more instances; return their ids."""
        before = {iid for iid, _ in self._actors}
        self._grow(count)
        return [iid for iid, _ in self._actors if iid not in before]

    def instance_ids(self) -> list[str]:
        """Ids of the instances this handle runs."""
        with self._mutex:
            return [iid for iid, _ in self._actors]

    def placements(self) -> list[dict[str, Any]]:
        """The node (id and IP) and pid of each instance (one that died meanwhile: left out)."""
        ray = self._backend._ray
        with self._mutex:
            actors = list(self._actors)
        ips = {n["NodeID"]: n["NodeManagerAddress"] for n in ray.nodes()}
        out = []
        for iid, actor in actors:
            try:
                where = ray.get(actor._ms_ready.remote(), timeout=10)
            except Exception:  # noqa: BLE001 (dead or unreachable: not placed anywhere now)
                continue
            out.append({"instance": iid, "node": where["node"],
                        "ip": ips.get(where["node"], "?"), "pid": where["pid"]})
        return out

    def _check_method(self, method: Method) -> str:
        """The method's name; a clear error for one of another class or not registered."""
        method = method_name(self._cls, self.name, method)
        if method not in self.specs:
            raise MethodNotRegisteredError(f"service {self.name!r} has no registered method "
                                           f"{method!r} (registered: {', '.join(self.specs)})")
        return method

    def kill_all(self) -> None:
        """Unregister and kill every actor at once (shutdown)."""
        ray = self._backend._ray
        ray.get([self._backend.registry.remove.remote(self.name, iid) for iid, _ in self._actors])
        for _, actor in self._actors + self._starting:
            ray.kill(actor)
        self._actors.clear()
        self._starting.clear()
        self._lifetimes.clear()

    def _grow(self, count: int) -> None:
        """Start ``count`` actors in parallel, wait until built, then register them."""
        self.begin(count)
        self.wait_ready()

    def begin(self, count: int) -> None:
        """Create ``count`` actors without waiting for their constructors (see wait_ready)."""
        new = [self._start(f"{self.name}#{next(self._ids)}") for _ in range(check_num(count))]
        with self._mutex:
            self._starting.extend(new)

    def wait_ready(self) -> None:
        """Wait until the actors being started are built, then register them; if one failed,
        kill them all and raise its constructor's error."""
        ray = self._backend._ray
        with self._mutex:
            new, self._starting = self._starting, []
        if not new:
            return
        readies = self._readies(new)
        lost = [i for i, r in enumerate(readies) if r.get("lost")]
        if lost:  # the worker process died, not the constructor: one fresh actor each
            log.warning("service %s: %d instance(s) lost their worker while starting; "
                        "starting them again", self.name, len(lost))
            for i in lost:
                ray.kill(new[i][1])
                new[i] = self._start(new[i][0])
            for i, ready in zip(lost, self._readies([new[i] for i in lost])):
                readies[i] = ready
        failed = next((r["error"] for r in readies if r.get("error") is not None), None)
        if failed is not None:
            for _, actor in new:
                ray.kill(actor)
            raise failed.rebuild(f"an instance of service {self.name!r} failed to start")
        ray.get([self._backend.registry.add.remote(self.name, iid, a) for iid, a in new])
        with self._mutex:
            self._actors.extend(new)
            self._lifetimes.update({iid: a._ms_lifetime.remote() for iid, a in new})

    def _readies(self, actors: list[tuple[str, Any]]) -> list[dict[str, Any]]:
        """Each actor's ready report; one whose process died is marked ``lost``."""
        ray = self._backend._ray
        refs = [actor._ms_ready.remote() for _, actor in actors]
        out = []
        for ref in refs:
            try:
                out.append(ray.get(ref))
            except ray.exceptions.RayActorError as exc:
                out.append({"lost": True, "error": ErrorInfo(
                    "ActorDiedError", str(exc).splitlines()[0])})
        return out

    def _start(self, instance_id: str) -> tuple[str, Any]:
        """Create one actor with this service's resources."""
        be, res = self._backend, self._resources
        # a Ray name of its own per actor: a killed actor's name may stay taken for a while
        options: dict[str, Any] = {"name": f"{instance_id}@{secrets.token_hex(4)}",
                                   "namespace": be.namespace,
                                   "num_cpus": res.num_cpus, "num_gpus": res.num_gpus,
                                   "resources": dict(res.custom)}
        if res.memory_mb is not None:
            options["memory"] = res.memory_mb * 1024 * 1024
        if res.spread:
            options["scheduling_strategy"] = "SPREAD"
        actor = self._actor_cls.options(**options).remote(
            self._cls, self._call, self.name, instance_id, be.namespace, be.torch_threads,
            be.log_file, be.attach_in_actor)
        return instance_id, actor

    def _stop(self, victims: list[tuple[str, Any]]) -> None:
        """Unregister, wait until callers saw it, let calls in flight finish, then kill."""
        ray = self._backend._ray
        ray.get([self._backend.registry.remove.remote(self.name, iid) for iid, _ in victims])
        time.sleep(REFRESH_S + 0.1)
        drains = [actor._ms_drain.remote(DRAIN_S) for _, actor in victims]
        ray.wait(drains, num_returns=len(drains), timeout=DRAIN_S + 5)
        for iid, actor in victims:
            self._lifetimes.pop(iid, None)
            ray.kill(actor)
