"""The Ray backend: each instance is a Ray actor; registry and topics share a named actor.

This package is the only place in msagent that imports Ray.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from msagent.errors import ConfigError, MsagentError, SerializationError
from msagent.runtime import slot
from msagent.runtime.backend import Backend, InstanceGone, Resources, Route, ServiceView
from msagent.runtime.channel import ChannelClients
from msagent.runtime.ray_service import RayHandle, ray_module

log = logging.getLogger("msagent.runtime")
REGISTRY_NAME = "msagent.registry"
"""The named actor holding the registry and the topic table."""


TOKEN_NOTICE_LOGGER = "ray._private.authentication.authentication_token_setup"

QUIET_HELPERS = {"RAY_LOG_MONITOR_MANY_FILES_THRESHOLD": "0", "REPORTER_UPDATE_INTERVAL_MS": "60000"}
"""An embedded Ray's helper processes, made quieter when idle: the log monitor looks for new
worker log files every 0.5 s instead of every 0.1 s (it globbed the log folder ten times a
second), and the dashboard agent samples node stats for Ray's own dashboard (which an embedded
run does not start) once a minute. Measured on 2 cores after 60 actors: 5.2 -> 3.7 CPU-s a
minute. Each stays overridable from the environment."""


class _TokenAuthOnNotice(logging.Filter):
    """Drops Ray's notice that token authentication is on, which every embedded run printed
    on the console: it is on, as msagent wants. Its other warnings (token authentication
    off) still pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Keep every record but the notice."""
        return not record.getMessage().startswith("Token authentication is enabled")


def _import_ray(embedded: bool) -> Any:
    """Import Ray; an embedded Ray must bind to 127.0.0.1, which Ray reads from the env."""
    if embedded:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        for name, value in QUIET_HELPERS.items():
            os.environ.setdefault(name, value)
        notices = logging.getLogger(TOKEN_NOTICE_LOGGER)
        if not any(isinstance(f, _TokenAuthOnNotice) for f in notices.filters):
            notices.addFilter(_TokenAuthOnNotice())
    return ray_module()


class RayBackend(Backend):
    """Runs every service instance as a Ray actor of the current Ray job."""

    name = "ray"

    def __init__(self, address: str | None = None, namespace: str = "msagent",
                 torch_threads: int = 1, num_cpus: int | None = None,
                 log_file: str | None = None) -> None:
        ray = self._ray = _import_ray(address is None)
        self._embedded = address is None
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            # "local": an embedded Ray is always new; with None, Ray would join whatever
            # cluster `ray start` (or another process's test cluster) last left on this machine
            start_ray(ray, address=address or "local", namespace=namespace,
                      include_dashboard=False, num_cpus=num_cpus if address is None else None,
                      logging_level=logging.WARNING, log_to_driver=True)
        from msagent.runtime.ray_actors import ControlActor

        super().__init__()
        self.namespace, self.torch_threads, self.log_file = namespace, torch_threads, log_file
        # each service actor runs it first: passed along, as ray_service cannot import this module
        self.attach_in_actor = attach_in_actor
        opts = {"namespace": namespace, "get_if_exists": True, "lifetime": None,
                "scheduling_strategy": _on_this_node(ray)}
        self.registry = self._topics = ControlActor.options(name=REGISTRY_NAME, **opts).remote()
        self._handles: list[RayHandle] = []
        self._lock = threading.Lock()
        self._errors = ray.exceptions
        self._channels, self._node_id = ChannelClients(self._describe_channel), None
        self._lost: set[tuple[str, int]] = set()

    def launch(self, cls: type, num: int, name: str, resources: Resources,
               args: tuple[Any, ...], kwargs: dict[str, Any], wait: bool = True) -> RayHandle:
        """Start ``num`` actors of ``cls`` and register them under ``name`` (``wait=False``:
        once ``wait_ready`` is called, so that several services start in parallel)."""
        if self._embedded:
            self._check_feasible(name, resources)
        handle = RayHandle(self, cls, name, resources, (args, kwargs))
        if not self._ray.get(self.registry.claim.remote(name, handle.specs)):
            raise MsagentError(f"a service named {name!r} is already running; "
                               "pick another name or scale the existing one")
        handle.begin(num)
        if wait:
            handle.wait_ready()
        with self._lock:
            self._handles.append(handle)
        return handle

    def _check_feasible(self, name: str, resources: Resources) -> None:
        """Refuse, naming them, resources this machine's Ray lacks: an actor asking for
        them would wait for ever (an embedded Ray gains no nodes).

        Raises:
            ConfigError: a GPU share on a machine without one, or a cluster's custom resource.
        """
        total = self._ray.cluster_resources()
        need = {"GPU": resources.num_gpus, **resources.custom}
        short = {k: v for k, v in need.items() if v and v > total.get(k, 0.0)}
        if not short:
            return
        asked = ", ".join(f"{v:g} {k}" for k, v in short.items())
        has = ", ".join(f"{total.get(k, 0.0):g} {k}" for k in short)
        why = (["a GPU share: its device names a GPU (services.<name>.device) or its "
                "resources.num_gpus is set"] if "GPU" in short else []) + \
            (["custom resources name the nodes of a Ray cluster: pass --address"]
             if set(short) - {"GPU"} else [])
        raise ConfigError(f"service {name!r} asks for {asked} per instance, but the Ray this "
                          f"run started on this machine has {has}; {'; '.join(why)}")

    def lookup(self, service: str, known_epoch: int) -> ServiceView | None:
        """Ask the registry for the service's view if it changed."""
        found = self._ray.get(self.registry.lookup.remote(service, known_epoch))
        return None if found is None else ServiceView(*found)

    def services(self) -> list[str]:
        """Services with live instances."""
        return self._ray.get(self.registry.services.remote())

    def call(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any], direct: bool = False) -> Any:
        """Send the call and wait for it (over the instance's channel when direct and local)."""
        if direct and route.channel is not False:
            sent, result = self._channels.call(route, method, args, kwargs)
            if sent:
                return result
        return self.resolve(self.submit(route, method, args, kwargs), None)

    def _describe_channel(self, route: Route) -> tuple[str, bytes] | None:
        """The instance's channel (address, key) if it has one on this node, else None."""
        try:
            info = self.resolve(route.target._ms_channel.remote(), None)
        except InstanceGone:
            raise
        except Exception:  # an instance that cannot tell is still served through Ray
            log.warning("no direct channel to %s", route.instance_id, exc_info=True)
            return None
        if self._node_id is None:
            self._node_id = self._ray.get_runtime_context().get_node_id()
        local = info["address"] is not None and info["node"] == self._node_id
        return (info["address"], info["key"]) if local else None

    def submit(self, route: Route, method: str, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
        """Send the call; return its object ref."""
        remote = route.methods.get(method)
        if remote is None:
            remote = route.methods[method] = getattr(route.target, method)
        try:
            return remote.remote(*args, **kwargs)
        except TypeError as exc:
            raise SerializationError(
                f"cannot send the arguments of {route.instance_id}.{method}: {exc}") from None

    def resolve(self, token: Any, timeout_s: float | None) -> Any:
        """Wait for an object ref; a dead actor becomes InstanceGone."""
        try:
            return self._ray.get(token, timeout=timeout_s)
        except self._errors.GetTimeoutError:
            raise TimeoutError(f"no answer within {timeout_s} s") from None
        except self._errors.RayActorError as exc:
            raise InstanceGone(str(exc).splitlines()[0] if str(exc) else repr(exc)) from None
        except self._errors.RayTaskError as exc:
            raise _original(exc) from None

    def fire(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> None:
        """Send the call and drop its ref (the actor logs errors)."""
        self.submit(route, method, args, kwargs)

    def report_dead(self, service: str, instance_id: str, target: Any = None) -> None:
        """Tell the registry, without waiting; only that actor is removed (a caller holding a
        route from before, say the previous run on the same Ray, must not remove the new
        instance that reuses its id)."""
        actor = getattr(target, "_actor_id", None)
        self.registry.remove.remote(service, instance_id, None if actor is None else actor.hex())

    def publish(self, topic: str, value: Any, at_least: int = 0) -> int:
        """Put the value in the object store once and record its ref as the next version."""
        ref = self._ray.put(value)
        return self._ray.get(self._topics.publish.remote(topic, [ref], at_least))

    def topic_latest(self, topic: str, known_version: int,
                     fetch: bool = True) -> tuple[int, Any] | None:
        """The newest (version, value) if newer; the value is read from the object store.

        A value lost with its publisher's process counts as not there (None).
        """
        entry = self._ray.get(self._topics.latest.remote(topic, known_version))
        return self._unbox(topic, entry) if fetch or entry is None else (entry[0], None)

    def topic_wait(self, topic: str, version: int, timeout_s: float | None,
                   fetch: bool = True) -> tuple[int, Any] | None:
        """Block (in the topics actor) until a newer version exists whose value can be read."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            entry = self._ray.get(self._topics.wait_newer.remote(topic, version, remaining))
            if entry is not None and not fetch:
                return entry[0], None
            found = self._unbox(topic, entry)
            if entry is None or found is not None:
                return found
            version = entry[0]  # lost: wait for the publish after it

    def _unbox(self, topic: str,
               entry: tuple[int, list[Any]] | None) -> tuple[int, Any] | None:
        """Fetch the value behind a boxed ref; None if there is none or it was lost.

        A value is owned by the process that published it and is lost when that process ends
        (a learner stopped or died, e.g. in an earlier run on this Ray); subscribers then wait
        for the next publish instead of failing.
        """
        if entry is None or (topic, entry[0]) in self._lost:
            return None
        try:
            return entry[0], self._ray.get(entry[1][0])
        except self._errors.ObjectLostError:
            self._lost.add((topic, entry[0]))
            log.warning("version %d of topic %r was lost with its publisher; waiting for a "
                        "newer one", entry[0], topic)
            return None

    def forget_topics(self) -> int:
        """Drop every published topic, so that a later run on this Ray (a test session's, a
        notebook's) cannot adopt an earlier run's parameters; how many there were."""
        return int(self._ray.get(self._topics.forget_topics.remote()))

    def stop_services(self) -> None:
        """Kill every service this process launched; Ray keeps running."""
        with self._lock:
            handles, self._handles = self._handles, []
        for handle in handles:
            handle.kill_all()

    def shutdown(self) -> None:
        """Stop the services started here; stop Ray if this process started it."""
        self.stop_services()
        if self._owns_ray:
            self._ray.shutdown()


def _original(exc: Any) -> BaseException:
    """The exception a remote method raised, with its remote traceback as a note (instead of
    Ray's wrapper, whose message is the whole traceback)."""
    cause = getattr(exc, "cause", None)
    if not isinstance(cause, BaseException):
        return exc
    if getattr(exc, "traceback_str", ""):
        cause.add_note("remote traceback:\n" + exc.traceback_str.rstrip())
    return cause


def attach_in_actor(namespace: str, torch_threads: int, log_file: str | None = None) -> None:
    """Inside a service actor: make Solver/publish use this Ray job, and log to the run's file."""
    slot.put(RayBackend(None, namespace, torch_threads, log_file=log_file))
    if log_file:
        from msagent.telemetry.logs import append_to_log

        append_to_log(log_file)


def _on_this_node(ray: Any) -> Any:
    """Pin to the driver's node: the registry and topic table must not die with a worker node
    of a cluster (the driver's own node ends the run anyway)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)


RAY_START_TRIES = 2
"""Ray waits a fixed 30 s for a new node's raylet to register; on a loaded 2-core machine it
sometimes takes longer, so an embedded Ray that timed out is started once more."""


def start_ray(ray: Any, **options: Any) -> None:
    """``ray.init``, tried again once if the new node timed out during its start-up."""
    for attempt in range(1, RAY_START_TRIES + 1):
        try:
            ray.init(**options)
            return
        except Exception as exc:
            if "timed out during startup" not in str(exc) or attempt == RAY_START_TRIES:
                raise
            logging.getLogger("msagent.runtime").warning(
                "Ray's node did not start within 30 s (a loaded machine?); starting it again")
            ray.shutdown()
