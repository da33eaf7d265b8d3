"""Which ``Host`` names a dashboard answers: the app checks them, the server computes them from
the address it binds (a module of its own, so that neither imports the other)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

WILDCARDS = ("", "0.0.0.0", "::")
"""Bind addresses meaning every interface (no ``Host`` name of their own)."""
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""``Host`` names (without port) every dashboard answers: this machine's own."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, allow: Iterable[str] = ()) -> list[str]:
    """The ``Host`` names a dashboard bound to ``host`` answers: loopback names, ``host``
    itself unless it is a wildcard, and ``allow`` (names without port)."""
    names = [*LOOPBACK_HOSTS, *([] if host in WILDCARDS else [host]), *allow]
    return list(dict.fromkeys(_host_name(n) for n in names))


def _host_name(name: str) -> str:
    """A name as a ``Host`` header carries it: lower case, IPv6 addresses in brackets."""
    name = name.strip().lower()
    return f"[{name}]" if ":" in name and not name.startswith("[") else name
