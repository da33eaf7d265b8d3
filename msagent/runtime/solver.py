"""``Solver``: call a registered method on whichever live instance of a service answers."""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import Future
from typing import Any, Callable

from msagent.runtime import state
from msagent.runtime.backend import InstanceGone, Route
from msagent.runtime.core import InstanceCore
from msagent.runtime.handle import ServiceRef
from msagent.runtime.router import Router
from msagent.runtime.spec import RegisterSpec, registered_methods

_local_cores: weakref.WeakKeyDictionary[Any, InstanceCore] = weakref.WeakKeyDictionary()


def forget_routes() -> None:
    """Drop the installed backend's cached routes (a test reusing one backend starts clean)."""
    backend = state.installed()
    if backend is not None:
        backend.routes.clear()


def service_name(target: Any) -> str:
    """The service a target names: a name, a handle or ref, or a class (its name)."""
    if isinstance(target, str):
        return target
    if isinstance(target, ServiceRef):
        return target.name
    if isinstance(target, type):
        return target.__name__
    raise TypeError(f"cannot tell which service {target!r} names; pass a service name, "
                    "the handle launch() returned, or the service class")


def router_for(target: Any) -> Router:
    """The process-wide router of the target's service on the current backend."""
    backend = state.current()
    return backend.routes.get(service_name(target), lambda name: Router(backend, name))


class CallFuture:
    """The pending result of ``retrieve_async``; ``result()`` waits for it."""

    def __init__(self, router: Router, route: Route, method: str, spec: RegisterSpec,
                 call: tuple[tuple[Any, ...], dict[str, Any]], token: Any) -> None:
        self._router, self._route, self._method, self._spec = router, route, method, spec
        self._call, self._token = call, token
        self._released = False

    def result(self, timeout_s: float | None = None) -> Any:
        """Wait for the answer; re-raise the remote error; retry idempotent calls."""
        try:
            return self._router.backend.resolve(self._token, timeout_s)
        except InstanceGone as exc:
            self._release()
            self._router.on_gone(self._route, self._method, self._spec, exc)
            return self._router.call(self._method, self._spec, *self._call)
        finally:
            self._release()

    def _release(self) -> None:
        """Count this call as finished exactly once."""
        if not self._released:
            self._released = True
            self._router.release(self._route)

    def __del__(self) -> None:
        """A future dropped without ``result()`` still frees its load-balancing slot."""
        if not getattr(self, "_released", True):
            self._release()


def call(method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a registered method named by the method itself (``ReplayBufferService.insert``)
    on a live instance of its class's service: typed clients are built on it, so a renamed
    method or service fails at import, and "find usages" finds every caller."""
    service, _, name = method.__qualname__.rpartition(".")
    return Solver().retrieve(service, name, *args, **kwargs)


class Solver:
    """Finds the live instances that registered a method and calls one of them.

    Cheap to create: every Solver in a process shares the same routes.
    """

    def retrieve(self, target: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``method`` on a live instance of ``target`` and return its result.

        ``target`` is a service name, the handle ``launch`` returned, the service class, or a
        plain local object (then the method runs here, with the same batching rules).
        A fire-and-forget method (``response=False``) returns None at once.
        """
        if _is_local_object(target):
            return _local_call(target, method, args, kwargs)
        router = router_for(target)
        spec = router.spec(method)
        if not spec.response:
            route = router.pick()
            try:
                router.backend.fire(route, method, args, kwargs)
            finally:
                router.release(route)
            return None
        return router.call(method, spec, args, kwargs)

    def retrieve_async(self, target: Any, method: str, *args: Any, **kwargs: Any) -> CallFuture:
        """Like ``retrieve`` but return a future at once, so a caller can pipeline calls."""
        router = router_for(target)
        spec = router.spec(method)
        route = router.pick()
        try:
            token = router.backend.submit(route, method, args, kwargs)
        except BaseException:
            router.release(route)
            raise
        return CallFuture(router, route, method, spec, (args, kwargs), token)

    @staticmethod
    def gather(futures: list[CallFuture], timeout_s: float | None = None) -> list[Any]:
        """Wait for several futures and return their results in order."""
        return [f.result(timeout_s) for f in futures]


def _is_local_object(target: Any) -> bool:
    """A plain object whose class registered methods (the seed's ``Worker()`` snippet)."""
    return not isinstance(target, (str, type, ServiceRef)) and bool(
        registered_methods(type(target)))


def _local_call(obj: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Serve a call on a local object with the rules of its registration."""
    core = _local_cores.get(obj)
    if core is None:
        core = _local_cores.setdefault(obj, InstanceCore(obj, type(obj).__name__, "local"))
    if core.spec(method).response:
        return core.invoke(method, args, kwargs)
    done: Future[None] = Future()
    threading.Thread(target=lambda: done.set_result(core.invoke_logged(method, args, kwargs)),
                     daemon=True).start()
    return None
