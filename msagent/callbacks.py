"""Your hooks (``[callbacks] script = "hooks.py"``): functions named after events, each run in
the process where its data is, each able to log scalars of your own.

A hooks script defines any of ``on_update``, ``on_snapshot``, ``on_match_result``,
``on_evaluation`` and ``on_checkpoint``; each takes one argument, the event, whose fields say
what happened and whose ``log(name, value)`` records a scalar. The scalars reach TensorBoard
(``user/<name>``), the dashboard, and the progress line for the names ``[callbacks] progress``
lists. A hook that raises is reported with its name and the run goes on (``on_error =
"continue"``, the default) or stops (``"stop"``).
"""

from __future__ import annotations

import inspect
import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from msagent.errors import ScriptError, UserError
from msagent.script_loader import load_script

log = logging.getLogger("msagent.callbacks")

HOOKS = ("on_update", "on_snapshot", "on_match_result", "on_evaluation", "on_checkpoint")
"""Every hook a script may define (anything else named ``on_*`` is refused as a typo)."""

ERRORS_KEPT = 20
"""Hook failures a process keeps until the driver collects them (later ones are counted)."""


class CallbackError(UserError, RuntimeError):
    """A user's hook failed and ``[callbacks] on_error = "stop"`` says to stop the run."""


@dataclass
class HookEvent:
    """The base of every event: ``log`` records a scalar of your own."""

    _scalars: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    def log(self, name: str, value: float) -> None:
        """Record ``value`` as the scalar ``name`` (TensorBoard ``user/<name>``)."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"a scalar's name must be a non-empty string, not {name!r}")
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"scalar {name!r} is {number}: only finite numbers are logged")
        self._scalars[name] = number


@dataclass
class UpdateEvent(HookEvent):
    """A learner's update (run in the learner, rank 0 of a group)."""

    player: str = "main"
    updates: int = 0
    version: int = 0
    stats: dict[str, float] = field(default_factory=dict)


@dataclass
class SnapshotEvent(HookEvent):
    """A snapshot pushed to the model pool (run in the learner); ``frozen``: a league snapshot
    that the league now plays against."""

    player: str = "main"
    key: str = ""
    updates: int = 0
    frozen: bool = False


@dataclass
class MatchEvent(HookEvent):
    """A finished league game (run in the league service): who sat where, and what each seat
    got."""

    players: list[str] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    length: int = 0


@dataclass
class EvaluationEvent(HookEvent):
    """New evaluation figures (run in the driver): ``kind`` is ``eval`` (win rates against
    fixed opponents), ``nash_conv`` or ``judged``; ``figures`` as the progress shows them."""

    kind: str = "eval"
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckpointEvent(HookEvent):
    """A checkpoint written (run in the driver)."""

    step: int = 0
    path: str = ""


@dataclass(frozen=True)
class CallbackSettings:
    """What every process needs to run the hooks: the script and what a failure does."""

    script: str
    on_error: str = "continue"


def hook_functions(script: str) -> dict[str, Callable[[HookEvent], Any]]:
    """The hooks a script defines, checked: at least one, each taking one event, no typos.

    Raises:
        ScriptError: a hook that is not a one-argument function, an ``on_*`` name that is no
            hook, or no hook at all.
    """
    module = load_script(script)
    found = {name: getattr(module, name) for name in HOOKS if hasattr(module, name)}
    unknown = sorted(n for n in vars(module) if n.startswith("on_") and n not in HOOKS)
    if unknown:
        raise ScriptError(f"callbacks script {script!r} defines {', '.join(unknown)}, which "
                          f"is no hook; the hooks are {', '.join(HOOKS)}")
    if not found:
        raise ScriptError(f"callbacks script {script!r} defines none of the hooks "
                          f"{', '.join(HOOKS)}")
    for name, func in found.items():
        _check_signature(script, name, func)
    return found


def _check_signature(script: str, name: str, func: Any) -> None:
    """Refuse a hook that cannot be called with one event."""
    if not callable(func):
        raise ScriptError(f"{name} in callbacks script {script!r} must be a function")
    try:
        inspect.signature(func).bind(None)
    except TypeError:
        raise ScriptError(f"{name}(event) in callbacks script {script!r} must take one "
                          "argument, the event") from None
    except ValueError:  # no signature to read (a builtin): the call will tell
        pass


class HookRunner:
    """Runs one process's hooks and keeps their scalars and failures for the driver."""

    def __init__(self, settings: CallbackSettings | None) -> None:
        self.settings = settings
        self.hooks = hook_functions(settings.script) if settings is not None else {}
        self._lock = threading.Lock()
        self._scalars: dict[str, float] = {}
        self._errors: list[str] = []

    def fire(self, hook: str, event: HookEvent) -> None:
        """Run ``hook`` with ``event`` if the script defines it; a failure is kept (and, with
        ``on_error = "stop"``, raised by :meth:`raise_if_stopping` where the driver sees it)."""
        func = self.hooks.get(hook)
        if func is None:
            return
        try:
            func(event)
        except Exception as exc:
            self._failed(hook, exc)
        with self._lock:
            self._scalars.update(event._scalars)

    def drain(self) -> dict[str, Any]:
        """The newest value of every scalar, and the failures since the last drain."""
        with self._lock:
            errors, self._errors = self._errors, []
            return {"scalars": dict(self._scalars), "errors": errors, "stop":
                    bool(errors) and self.settings is not None
                    and self.settings.on_error == "stop"}

    def _failed(self, hook: str, exc: Exception) -> None:
        """Keep (and log) a hook's failure, named by hook and script."""
        assert self.settings is not None
        message = (f"callback {hook} in {self.settings.script} failed: "
                   f"{type(exc).__name__}: {exc}")
        log.warning("%s", message, exc_info=exc)
        with self._lock:
            if len(self._errors) < ERRORS_KEPT:
                self._errors.append(message)
