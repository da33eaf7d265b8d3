"""Every error msagent raises on purpose, so callers can catch them by kind.

Two families decide the exit code of ``msagent train``: a :class:`UserError` (the config or a
user script is wrong: fix it and run again) exits with 2; anything else is a runtime failure
and exits with 1.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass


class MsagentError(Exception):
    """Base of all msagent errors."""


class UserError(MsagentError):
    """The user's configuration or scripts are wrong; ``msagent train`` exits with code 2."""


class ConfigError(UserError, ValueError):
    """A configuration value is missing, unknown or of the wrong type."""


class ScriptError(UserError, TypeError):
    """A user script returned something msagent cannot use (wrong type, space, shape)."""


class EnvDataError(UserError, ValueError):
    """An environment returned an observation or reward outside its declared space, or not
    finite; the message names the env, the step and the offending value."""


class IllegalActionError(UserError, ValueError):
    """A policy or bot chose an action its seat's legal-action mask forbids; the message names
    the game, the seat and the action."""


class NonFiniteError(MsagentError, FloatingPointError):
    """A loss or gradient was NaN or infinite; the update was refused, the weights kept."""


class ServiceDiedError(MsagentError, RuntimeError):
    """A service process died and cannot be replaced (or was replaced too often)."""


class ServiceNotFoundError(MsagentError, LookupError):
    """No live instance serves the requested service."""


class MethodNotRegisteredError(MsagentError, AttributeError):
    """The service exists but did not register the requested method."""


class InstanceDiedError(MsagentError, RuntimeError):
    """The instance running a call died before answering it."""


class BatchSizeError(MsagentError, ValueError):
    """A batched method returned a list whose length differs from the number of calls."""


class SerializationError(MsagentError, TypeError):
    """An argument or result cannot be sent between processes."""


class RateLimitTimeout(MsagentError, TimeoutError):
    """A rate-limited buffer call waited longer than its timeout."""


class RemoteError(MsagentError, RuntimeError):
    """An error of a kind msagent does not define, raised in another process (named inside)."""


@dataclass(frozen=True)
class ErrorInfo:
    """An exception as plain data, so a failure crosses a process boundary without pickle.

    Attributes:
        kind: The exception's class name, e.g. ``"EnvDataError"``.
        message: ``str(exc)``.
        traceback: The formatted traceback where it was raised (for ``train.log``).
        user: Whether it is a :class:`UserError` (exit code 2).
    """

    kind: str
    message: str
    traceback: str = ""
    user: bool = False

    @classmethod
    def of(cls, exc: BaseException) -> ErrorInfo:
        """Describe ``exc`` (with its traceback) as plain data."""
        tb = "".join(traceback.format_exception(exc))
        return cls(type(exc).__name__, str(exc), tb, isinstance(exc, UserError))

    def line(self) -> str:
        """``Kind: message`` on one line (the first line of the message)."""
        first = self.message.splitlines()[0] if self.message else ""
        return f"{self.kind}: {first}"

    def rebuild(self, context: str = "") -> MsagentError:
        """The msagent error this describes (same class when msagent defines it), with
        ``context`` in front of the message and the remote traceback as a note."""
        cls = globals().get(self.kind)
        prefix = f"{context}: " if context else ""
        if isinstance(cls, type) and issubclass(cls, MsagentError):
            exc: MsagentError = cls(prefix + self.message)
        elif self.user:
            exc = UserError(f"{prefix}{self.kind}: {self.message}")
        else:
            exc = RemoteError(f"{prefix}{self.kind}: {self.message}")
        if self.traceback:
            exc.add_note("remote traceback:\n" + self.traceback.rstrip())
        return exc
