"""Serving the dashboard with uvicorn on a socket bound here (so that port 0 picks a free port
and the URL printed is the real one)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from pathlib import Path

from msagent.dashboard.hosts import LOOPBACK_HOSTS, WILDCARDS, allowed_hosts, is_loopback

DEFAULT_PORT = 8420
__all__ = ["DEFAULT_PORT", "LOOPBACK_HOSTS", "WILDCARDS", "BackgroundServer", "allowed_hosts",
           "bind", "is_loopback", "serve"]


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port)."""
    from msagent.gateway.serve import listening_socket

    return listening_socket(host, port)


def serve(root: Path, host: str, port: int, say: Callable[[str], None] = print,
          allow_hosts: Iterable[str] = ()) -> None:
    """Serve the dashboard of ``root`` until Ctrl-C, to requests naming an allowed
    ``Host`` (see :func:`allowed_hosts`)."""
    import uvicorn

    from msagent.dashboard.app import make_app
    from msagent.gateway.http_limits import BoundedHttpProtocol

    sock = bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    names = allowed_hosts(host, allow_hosts)
    say(f"msagent dashboard of {Path(root).absolute()}: http://{shown}:{bound}/  (Ctrl-C to stop)")
    if not is_loopback(host):
        say(f"note: bound to {host}, so other machines can read this run (read-only); "
            + _hosts_note(names))
    server = uvicorn.Server(uvicorn.Config(make_app(root, names), log_level="warning",
                                           access_log=False, http=BoundedHttpProtocol,
                                           ws="none"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def _hosts_note(names: list[str]) -> str:
    """Which ``Host`` names a dashboard within other machines' reach accepts."""
    if set(names) <= set(LOOPBACK_HOSTS):
        return ("only loopback Host names are accepted: add --allow-host NAME for each name "
                "other machines reach it by")
    return f"Host names accepted: {', '.join(names)}"


class BackgroundServer:
    """The dashboard served from a thread of this process (notebooks, tests, benchmarks).

    Use as a context manager; ``url`` is where it listens (a free loopback port by default).
    """

    def __init__(self, root: Path, host: str = "127.0.0.1", port: int = 0,
                 allow_hosts: Iterable[str] = ()) -> None:
        import threading

        import uvicorn

        from msagent.dashboard.app import make_app
        from msagent.gateway.http_limits import BoundedHttpProtocol

        self._sock = bind(host, port)
        self.url = f"http://{host}:{self._sock.getsockname()[1]}"
        config = uvicorn.Config(make_app(root, allowed_hosts(host, allow_hosts)),
                                log_level="warning", access_log=False, http=BoundedHttpProtocol,
                                ws="none")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name="msagent-dashboard", daemon=True)

    def __enter__(self) -> BackgroundServer:
        """Start serving; return once the server accepts requests."""
        import time

        self._thread.start()
        deadline = time.monotonic() + 10.0
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop serving."""
        self._server.should_exit = True
        self._thread.join(timeout=10.0)
        self._sock.close()
