"""Keeps a run alive: replaces dead or failed env workers, inference servers and evaluators,
and stops the run with one clear error when a service that holds state (learner, buffer, model
pool) dies.

Replacements start in a background thread, so progress goes on while a new process imports
torch. A replacement gets a fresh instance index, hence a fresh seed (see ``worker_seed``).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from msagent.errors import ErrorInfo, ServiceDiedError
from msagent.runtime import ServiceHandle
from msagent.services.learner import Learner
from msagent.services.looping import Drainable, Looping

log = logging.getLogger("msagent.supervisor")

CRASH_LOOP_STRIKES = 3
"""Replacements in a row that fail before shipping any fragment: the env script is broken."""
REPLACING_AT_ONCE = 4
"""Services whose replacements may start at the same time (each service grows one at a time)."""


@dataclass
class Replacement:
    """One replaced instance, for the log and the result."""

    service: str
    dead: str
    cause: str
    detected_at: float
    new: str = ""
    ready_s: float | None = None
    back_s: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain data for the result JSON."""
        return {"service": self.service, "dead": self.dead, "new": self.new, "cause": self.cause,
                "ready_s": self.ready_s, "back_s": self.back_s}


@dataclass
class SupervisorSettings:
    """How the supervisor treats failures."""

    num_envs: int
    max_restarts: dict[str, int] = field(default_factory=dict)
    """Replacements allowed per service name per run (0: none; a failure stops the run)."""

    def limit(self, service: str) -> int:
        """The replacements allowed for ``service`` (20 unless set)."""
        return self.max_restarts.get(service, 20)


@dataclass
class _Book:
    """Per-service bookkeeping."""

    restarts: int = 0
    strikes: int = 0
    pending: list[Replacement] = field(default_factory=list)
    future: Future[list[str]] | None = None


class Supervisor:
    """Polled by the driver; returns what the env workers drained, raises on fatal failures."""

    def __init__(self, services: Any, settings: SupervisorSettings) -> None:
        self.services, self.s = services, settings
        self.replacements: list[Replacement] = []
        self.lost_fragments = 0
        self._books: dict[str, _Book] = {}
        self._shipped: dict[str, int] = {}
        # one grow at a time per service (its book's future), services in parallel: an env
        # worker killed with the evaluator need not wait for the evaluator's start
        self._pool = ThreadPoolExecutor(REPLACING_AT_ONCE, thread_name_prefix="msagent-replace")

    def poll(self) -> dict[str, dict[str, Any]]:
        """Check every service once; the workers' drained data by instance id."""
        for handle in self.services.stateful():
            dead = handle.reap()
            if dead:
                raise ServiceDiedError(f"service {handle.name} died ({', '.join(dead)})")
        for helper in self._helpers():
            self._replace(helper, handle_dead(helper))
        drained = {}
        for feeder in self._feeders():
            drained.update(self._supervise(feeder))
        return drained

    def _helpers(self) -> list[ServiceHandle]:
        """The services that hold no state and ship nothing: a dead instance is just replaced
        (inference servers; evaluators, whose replacement starts its loop afresh; the user's
        services declared ``restart = true``)."""
        found = [self.services.inference, getattr(self.services, "evaluator", None),
                 *(h for n, h in getattr(self.services, "custom", {}).items()
                   if n in getattr(self.services, "restartable", set()))]
        return [h for h in found if h is not None]

    def _feeders(self) -> list[ServiceHandle]:
        """The services that ship fragments: env workers, and store readers beside them."""
        readers = getattr(self.services, "readers", None)
        return [self.services.workers] + ([readers] if readers is not None else [])

    def _supervise(self, feeders: ServiceHandle) -> dict[str, dict[str, Any]]:
        """Drain one feeding service; replace its dead or failed instances."""
        dead = handle_dead(feeders)
        drained = feeders.call_each(Drainable.drain)
        failed = {iid: d["error"] for iid, d in drained.items() if d["error"] is not None}
        self._check_fatal(feeders, failed)
        if failed:
            feeders.remove(list(failed))
        self._count_shipped(drained)
        self._replace(feeders, dead + [(iid, err.line()) for iid, err in failed.items()])
        self._finish_replacements(drained)
        return drained

    def close(self) -> None:
        """Wait for a replacement in progress (it must not outlive the run's backend)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _check_fatal(self, feeders: ServiceHandle, failed: dict[str, ErrorInfo]) -> None:
        """A user error (bad env data, a broken script) is not retried: it stops the run."""
        for iid, err in failed.items():
            if err.user or self.s.limit(feeders.name) == 0:
                what = "env worker" if feeders is self.services.workers else "store reader"
                raise err.rebuild(f"{what} {iid} failed")

    def _count_shipped(self, drained: dict[str, dict[str, Any]]) -> None:
        """Remember which instances took env steps (a replacement that did is healthy)."""
        for iid, d in drained.items():
            if d["env_steps"]:
                self._shipped[iid] = self._shipped.get(iid, 0) + d["env_steps"]

    def _replace(self, handle: ServiceHandle, dead: list[tuple[str, str]]) -> None:
        """Start replacements for dead instances in the background, within the limits."""
        if not dead:
            return
        book = self._books.setdefault(handle.name, _Book())
        for iid, cause in dead:
            self._strike(handle.name, book, iid, cause)
            book.pending.append(Replacement(handle.name, iid, cause, time.monotonic()))
            log.warning("%s died or failed (%s); starting a replacement", iid, cause)
        if handle is self.services.workers:
            self.lost_fragments += len(dead) * self.s.num_envs
            self._resize_batch()
        self._launch(handle, book)

    def _strike(self, service: str, book: _Book, iid: str, cause: str) -> None:
        """Count a replacement; stop the run past the limit or in a crash loop."""
        book.restarts += 1
        book.strikes = book.strikes + 1 if not self._shipped.get(iid) else 1
        if book.restarts > self.s.limit(service):
            raise ServiceDiedError(f"{iid} died or failed ({cause}); {service} was already "
                                   f"replaced {self.s.limit(service)} times (the limit)")
        if service in {h.name for h in self._feeders()} and book.strikes > CRASH_LOOP_STRIKES:
            raise ServiceDiedError(f"{iid} failed ({cause}); {CRASH_LOOP_STRIKES} replacements "
                                   "in a row failed before taking a step: the env script is "
                                   "crash-looping")

    def _launch(self, handle: ServiceHandle, book: _Book) -> None:
        """Grow the service by the number of pending replacements (one grow at a time)."""
        if book.future is not None and not book.future.done():
            return
        waiting = [r for r in book.pending if not r.new]
        if waiting:
            book.future = self._pool.submit(handle.grow, len(waiting))

    def _finish_replacements(self, drained: dict[str, Any]) -> None:
        """Start replacements that are ready, and record when they first took steps."""
        handles = {h.name: h for h in [*self._feeders(), *self._helpers()]}
        for name, book in self._books.items():
            handle = handles[name]
            if book.future is not None and book.future.done():
                self._started(handle, book, book.future.result())
                book.future = None
                self._launch(handle, book)
            feeding = handle in self._feeders()
            for rep in [r for r in book.pending if _is_back(r, feeding, drained)]:
                rep.back_s = round(time.monotonic() - rep.detected_at, 2)
                book.pending.remove(rep)
                log.info("replacement %s of %s is back after %.1f s", rep.new, rep.dead, rep.back_s)

    def _started(self, handle: ServiceHandle, book: _Book, new: list[str]) -> None:
        """Assign new instances to the waiting replacements and start their loops."""
        waiting = [r for r in book.pending if not r.new]
        for rep, iid in zip(waiting, new):
            rep.new, rep.ready_s = iid, round(time.monotonic() - rep.detected_at, 2)
            self.replacements.append(rep)
        if handle in self._feeders() or handle is getattr(self.services, "evaluator", None):
            handle.call_some(new, Looping.run)
        if handle is self.services.workers:
            self._resize_batch()

    def _resize_batch(self) -> None:
        """Tell the learner how many fragments one round now has (sync PPO waits for it);
        a configured batch size stays as it is."""
        if self.services.fixed_batch:
            return
        live = len(self.services.workers.instance_ids())
        total = max(1, sum(self.services.batches.values())) // max(1, self.s.num_envs)
        try:
            for player, handle in self.services.learners.items():
                full = self.services.batches.get(player, total * self.s.num_envs)
                handle.call_all(Learner.set_batch_fragments, max(1, -(-full * live // total)))
        except Exception:  # a dead learner is reported by the next poll
            log.exception("could not resize the learner's batch")


def handle_dead(handle: ServiceHandle) -> list[tuple[str, str]]:
    """The instances of a service whose process died, with the cause."""
    return [(iid, "its process died") for iid in handle.reap()]


def _is_back(rep: Replacement, is_worker: bool, drained: dict[str, Any]) -> bool:
    """A replacement is back once started, and (for an env worker) once it took steps."""
    if not rep.new:
        return False
    return not is_worker or bool(drained.get(rep.new, {}).get("env_steps"))
