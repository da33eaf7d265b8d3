"""Every error msagent raises on purpose, so callers can catch them by kind."""

from __future__ import annotations


class MsagentError(Exception):
    """Base of all msagent errors."""


class ConfigError(MsagentError, ValueError):
    """A configuration value is missing, unknown or of the wrong type."""


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
