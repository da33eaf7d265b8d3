"""The embedded ``redis-server`` of ``msagent serve`` when no ``redis_url`` is configured:
loopback only, append-only persistence in ``<data_dir>/redis`` (a folder only its owner may
enter), stopped with the gateway (and by the kernel if the gateway dies: it gets SIGTERM when
its parent does).

It requires a random password (``requirepass``), so other local users can neither read the
uploads nor add entries in a client's name. The password reaches Redis on its standard input
(``redis-server -`` reads config from there), never on a command line (``ps`` shows those to
everyone) nor in a file; the URL :func:`embedded_redis` yields carries it, and ``msagent
serve`` hands that URL to its children by environment only."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from msagent.errors import UserError

START_TIMEOUT_S = 30.0
"""How long Redis may take to answer PING (it replays its append-only file first)."""

STOP_TIMEOUT_S = 10.0
"""How long a SIGTERM'd Redis may take to flush and exit before it is killed."""


LOCK_FILE = "gateway.lock"
"""Held (flock) by the gateway whose embedded Redis uses the folder."""


class RedisNotInstalled(UserError, FileNotFoundError):
    """``redis-server`` is not on PATH and no ``redis_url`` was configured."""


class RedisInUse(UserError):
    """Another gateway's embedded Redis already uses this data folder."""


def free_loopback_port() -> int:
    """A TCP port nobody listens on right now on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers_ping(port: int, password: str | None = None) -> bool:
    """Whether a Redis on the loopback port is up: PING answered, after AUTH with
    ``password`` when given (NOAUTH, or LOADING while it replays its AOF, is not up yet)."""
    client = redis.Redis(host="127.0.0.1", port=port, password=password, socket_timeout=0.5,
                         socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def _load_prctl() -> Any:
    """libc's prctl, loaded in the parent (loading libraries after fork can deadlock)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux
        return None


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In a child about to exec: ask Linux to SIGTERM it when its parent dies (no orphans)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


@contextlib.contextmanager
def embedded_redis(data_dir: Path, appendfsync: str = "everysec") -> Iterator[str]:
    """Run ``redis-server`` for the duration of the block; yields its ``redis://`` URL, which
    holds its password (show it with :func:`msagent.credentials.redact`)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RedisNotInstalled("redis-server is not installed (apt-get install redis-server), "
                                "and [gateway] redis_url is empty")
    folder = Path(data_dir) / "redis"
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # the append-only files hold every upload
    password = secrets.token_urlsafe(32)
    with _exclusive(folder):
        proc, port = _start(binary, folder, appendfsync, password)
        try:
            yield f"redis://:{password}@127.0.0.1:{port}/0"
        finally:
            stop_process(proc, STOP_TIMEOUT_S)


@contextlib.contextmanager
def _exclusive(folder: Path) -> Iterator[None]:
    """Hold a lock on the Redis folder: two servers must never append to one AOF."""
    with open(folder / LOCK_FILE, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RedisInUse(f"{folder} is used by another msagent serve's embedded Redis "
                             "(one data_dir per gateway)") from None
        yield


def _start(binary: str, folder: Path, appendfsync: str,
           password: str) -> tuple[subprocess.Popen, int]:
    """Start Redis on a free port (trying again if another process takes the port first),
    its password given on stdin."""
    for attempt in range(3):
        port = free_loopback_port()
        args = [binary, "-", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "yes", "--appendfsync", appendfsync, "--dir", str(folder),
                "--logfile", "redis.log", "--daemonize", "no", "--protected-mode", "yes"]
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        _write_config(proc, f"requirepass {password}\n")
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            if answers_ping(port, password):
                return proc, port
            time.sleep(0.02)
        stop_process(proc, STOP_TIMEOUT_S)
    log = folder / "redis.log"
    tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
    raise RuntimeError(f"redis-server did not answer PING (see {log}):\n{tail}")


def _write_config(proc: subprocess.Popen, text: str) -> None:
    """Give Redis its config on stdin and close it (Redis reads to the end before starting;
    one that died already is found by the caller's poll)."""
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(text.encode())
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()


def stop_process(proc: subprocess.Popen, timeout_s: float) -> int | None:
    """SIGTERM a child, SIGKILL it if it is not gone within ``timeout_s``; its exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
