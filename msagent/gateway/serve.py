"""``msagent serve CONFIG``: the gateway with everything it needs, stopped cleanly together.

Starts, in order: the embedded Redis (when ``redis_url`` is empty), the ingestion consumer as
a child process (when ``ingest`` is true; restarted if it dies; at niceness ``ingest_nice``),
then uvicorn (uvloop, and httptools through :class:`~msagent.gateway.upload_protocol.
UploadProtocol`, which answers most uploads without the ASGI round) on ``host:port``, in
``workers`` processes. Ctrl-C or
SIGTERM stops uvicorn (in-flight requests finish), then the consumer (it flushes its buffered
records), then Redis (it flushes its AOF).

The Redis URL (the embedded one's holds its password) reaches the consumer and the workers by
environment variable, never on a command line, and is printed redacted.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from msagent.config.gateway import GatewayConfig, load_gateway_config
from msagent.credentials import expand, redact
from msagent.errors import ConfigError
from msagent.gateway.redis_server import die_with_parent, embedded_redis, stop_process

_log = logging.getLogger("msagent.gateway")

INGEST_STOP_TIMEOUT_S = 30.0
"""How long the consumer may take to flush and exit after SIGTERM before it is killed."""

INGEST_RESTART_DELAY_S = 2.0
"""Pause before a consumer that died is started again."""


class Terminated(SystemExit):
    """SIGTERM arrived: unwind (stopping the children) instead of dying on the spot."""


def serve(config: str | Path, port: int | None = None,
          say: Callable[[str], None] = print) -> None:
    """Run the gateway of a config until Ctrl-C or SIGTERM (ConfigError: the config is bad)."""
    cfg = load_gateway_config(config)
    if port is not None:
        cfg.gateway.port = port
    cfg.schemas()  # a bad game is a config error now, not at the first upload
    try:  # so is a missing secret (each process expands it itself, when it connects)
        expand(cfg.gateway.redis_url)
    except ConfigError as exc:
        raise ConfigError(f"{config}: [gateway] redis_url: {exc}") from None
    cfg.data_dir.mkdir(parents=True, exist_ok=True)
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with contextlib.ExitStack() as stack:
            sock = stack.enter_context(listening_socket(cfg.gateway.host, cfg.gateway.port))
            redis_url = cfg.gateway.redis_url or stack.enter_context(
                embedded_redis(cfg.data_dir, cfg.gateway.appendfsync))
            if cfg.gateway.ingest:
                stack.enter_context(ingest_child(Path(config), redis_url,
                                                 cfg.gateway.ingest_nice))
            _run_uvicorn(cfg, Path(config), sock, redis_url, say)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_uvicorn(cfg: GatewayConfig, config: Path, sock: socket.socket, redis_url: str,
                 say: Callable[[str], None]) -> None:
    """Serve the app on a socket bound first (taken port: nothing else started; the printed
    port is the real one): in this process, or in ``workers`` processes sharing the socket
    (uvicorn's supervisor, which restarts a worker that dies)."""
    import uvicorn

    from msagent.gateway.upload_protocol import UploadProtocol

    host, port = sock.getsockname()[:2]
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    workers = cfg.gateway.workers
    options: dict[str, Any] = {
        "loop": "uvloop", "http": UploadProtocol, "lifespan": "on", "log_level": "warning",
        "access_log": False, "timeout_graceful_shutdown": 10,
        "proxy_headers": False,  # no X-Forwarded-* rewriting: nothing uses the client address
        "ws": "none",  # no WebSocket routes: an Upgrade is ignored (see http_limits)
        "server_header": False}  # clients need not know the server software
    docs = f"docs {url}/docs" if cfg.gateway.docs else f"API {url}/openapi.json"
    say(f"msagent gateway on {url} ({docs}), redis {redact(redis_url)}"
        + (f", {workers} worker processes" if workers > 1 else ""))
    if workers == 1:
        from msagent.gateway.app import build_app
        from msagent.gateway.heap import return_freed_memory

        return_freed_memory()

        uvicorn.Server(uvicorn.Config(build_app(cfg, redis_url), **options)).run(sockets=[sock])
    else:
        _run_workers(config, sock, redis_url, workers, options)


def _run_workers(config: Path, sock: socket.socket, redis_url: str, workers: int,
                 options: dict[str, Any]) -> None:
    """uvicorn's supervisor with ``workers`` spawned processes on the socket; each builds its
    app from the config file and Redis URL it finds in its environment."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from msagent.gateway.app import CONFIG_ENV, PARENT_ENV, REDIS_ENV

    os.environ.update({CONFIG_ENV: str(config.absolute()), REDIS_ENV: redis_url,
                       PARENT_ENV: str(os.getpid())})
    server_config = uvicorn.Config("msagent.gateway.app:app_from_environment", factory=True,
                                   workers=workers, **options)
    Multiprocess(server_config, sockets=[sock]).run()


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (port 0: any free one); SO_REUSEADDR for restarts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


@contextlib.contextmanager
def ingest_child(config: Path, redis_url: str, nice: int = 0) -> Iterator[None]:
    """``msagent ingest CONFIG`` as a child process of niceness ``nice``, restarted if it
    dies; the Redis URL in its environment (``INGEST_REDIS_ENV``), where other users cannot
    read it (they can read command lines)."""
    from msagent.experience.ingest_cli import INGEST_REDIS_ENV

    args = [sys.executable, "-m", "msagent", "ingest", str(config)]
    env = {**os.environ, INGEST_REDIS_ENV: redis_url}
    stopping = threading.Event()
    child: list[subprocess.Popen] = [_spawn(args, nice, env)]
    watcher = threading.Thread(target=_keep_running, args=(args, child, stopping, nice, env),
                               name="ingest-watcher", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stopping.set()
        watcher.join()
        rc = stop_process(child[0], INGEST_STOP_TIMEOUT_S)
        if rc not in (0, -signal.SIGTERM):
            _log.warning("the ingestion consumer exited with code %s", rc)


def _spawn(args: list[str], nice: int = 0,
           env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start the consumer at niceness ``nice`` with environment ``env`` (SIGTERM'd by the
    kernel should this process die)."""
    def prepare() -> None:
        die_with_parent()
        os.nice(nice)

    return subprocess.Popen(args, stdin=subprocess.DEVNULL, env=env, preexec_fn=prepare)


def _keep_running(args: list[str], child: list[subprocess.Popen],
                  stopping: threading.Event, nice: int = 0,
                  env: dict[str, str] | None = None) -> None:
    """Start the consumer again whenever it exits on its own."""
    while not stopping.wait(0.5):
        rc = child[0].poll()
        if rc is None:
            continue
        _log.error("the ingestion consumer exited with code %s; restarting it", rc)
        if stopping.wait(INGEST_RESTART_DELAY_S):
            return
        child[0] = _spawn(args, nice, env)


def _raise_terminated(signum: int, frame: object) -> None:
    """SIGTERM handler: unwind like Ctrl-C does."""
    raise Terminated(0)
