"""Per-process routing to the live instances of one service: least outstanding requests."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from typing import Any

from msagent.errors import (
    InstanceDiedError,
    MethodNotRegisteredError,
    ServiceNotFoundError,
)
from msagent.runtime.backend import Backend, InstanceGone, Route
from msagent.runtime.spec import RegisterSpec

log = logging.getLogger("msagent.runtime")
REFRESH_S = 0.5
"""How stale a caller's view of a service may get before it asks the registry again."""


class Router:
    """Knows a service's instances and methods; refreshes lazily from the registry."""

    def __init__(self, backend: Backend, service: str) -> None:
        self.backend = backend
        self.service = service
        self._lock = threading.Lock()
        self._routes: list[Route] = []
        self._specs: dict[str, RegisterSpec] = {}
        self._epoch = -1
        self._next_refresh = 0.0
        self._rr = itertools.count()
        self._refreshing = False

    def spec(self, method: str) -> RegisterSpec:
        """The method's spec; unknown methods and services are clear errors naming both."""
        self._maybe_refresh()
        spec = self._specs.get(method)
        if spec is None:
            self._maybe_refresh(force=True)
            spec = self._specs.get(method)
        if spec is None and not self._routes:
            raise self._not_found()
        if spec is None:
            raise MethodNotRegisteredError(
                f"service {self.service!r} has no registered method {method!r} "
                f"(registered: {', '.join(sorted(self._specs)) or 'none'})")
        return spec

    def pick(self) -> Route:
        """The live instance with the fewest calls in flight (round robin among ties)."""
        self._maybe_refresh()
        with self._lock:
            routes = self._routes
            if not routes:
                raise self._not_found()
            start = next(self._rr) % len(routes)
            best = routes[start]
            for route in itertools.islice(itertools.chain(routes[start:], routes[:start]), 1, None):
                if route.outstanding < best.outstanding:
                    best = route
            best.outstanding += 1
            return best

    def release(self, route: Route) -> None:
        """Mark one call on ``route`` as finished."""
        with self._lock:
            route.outstanding -= 1

    def drop(self, route: Route) -> None:
        """Stop routing to a dead instance here, and tell the registry."""
        with self._lock:
            self._routes = [r for r in self._routes if r is not route]
        self.backend.report_dead(self.service, route.instance_id, route.target)

    def call(self, method: str, spec: RegisterSpec, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
        """Call and wait; retry idempotent calls whose instance died."""
        while True:
            route = self.pick()
            try:
                return self.backend.call(route, method, args, kwargs, spec.direct)
            except InstanceGone as exc:
                self.on_gone(route, method, spec, exc)
            finally:
                self.release(route)

    def on_gone(self, route: Route, method: str, spec: RegisterSpec, exc: Exception) -> None:
        """Drop the dead instance; raise unless the call may be retried elsewhere."""
        self.drop(route)
        if not spec.idempotent:
            raise InstanceDiedError(
                f"instance {route.instance_id} of service {self.service!r} died while running "
                f"{method!r} (register it with idempotent=True to retry elsewhere): {exc}"
            ) from None

    def _maybe_refresh(self, force: bool = False) -> None:
        """Ask the registry for a newer view when ours is stale (or forced, or empty).

        A stale view that still has routes is refreshed by a background thread, so that a
        caller on a hot path (an env worker asking for actions every step) never waits for the
        registry; an empty or forced one is refreshed before returning.
        """
        now = time.monotonic()
        if not force and now < self._next_refresh and self._routes:
            return
        self._next_refresh = now + REFRESH_S
        if force or not self._routes:
            self._refresh()
        elif not self._refreshing:
            self._refreshing = True
            threading.Thread(target=self._refresh_in_background, daemon=True,
                             name=f"refresh:{self.service}").start()

    def _refresh_in_background(self) -> None:
        """One background refresh; a failure (e.g. a backend shutting down) waits for the next."""
        try:
            self._refresh()
        except BaseException:  # incl. the SystemExit Ray raises in threads as it shuts down
            log.debug("background refresh of %r failed", self.service, exc_info=True)
        finally:
            self._refreshing = False

    def _refresh(self) -> None:
        """Adopt the registry's view if it changed since ours."""
        view = self.backend.lookup(self.service, self._epoch)
        if view is None:
            return
        with self._lock:
            old = {r.instance_id: r for r in self._routes}
            self._routes = [_same(old.get(iid), target) or Route(iid, target)
                            for iid, target in view.instances]
            self._specs, self._epoch = view.specs, view.epoch

    def _not_found(self) -> ServiceNotFoundError:
        """The error for a service with no live instance, listing the known services."""
        known = ", ".join(sorted(self.backend.services())) or "none"
        return ServiceNotFoundError(
            f"no live instance of service {self.service!r} (services with instances: {known})")


def _same(route: Route | None, target: Any) -> Route | None:
    """``route`` if it still leads to ``target``; an id reused by a relaunched service (the
    same ``name#0`` for a new instance) must not keep the old instance's route."""
    return route if route is not None and route.target == target else None
