"""The one exception the gateway's request handling raises on purpose: an HTTP status and a
short reason, answered as ``{"error": reason}`` (never a traceback)."""

from __future__ import annotations


class Refused(Exception):
    """Refuse a request with ``status`` and ``{"error": reason}`` (plus optional headers).

    Attributes:
        status: The HTTP status code.
        reason: What the client did wrong (or why it should retry), one line.
        headers: Extra response headers, e.g. ``Retry-After``.
    """

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers or {}


def retry_after(seconds: float) -> dict[str, str]:
    """A ``Retry-After`` header (whole seconds, at least 1)."""
    return {"Retry-After": str(max(1, int(seconds + 0.999)))}
