"""A real ``redis-server`` per test session on a free loopback port (no persistence), for the
model pool's and the league mirror's tests, and password-protected ones on demand; skipped
where redis-server is not installed."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from msagent.gateway.redis_server import answers_ping as _answers_ping
from msagent.gateway.redis_server import free_loopback_port as _free_loopback_port


REDIS_START_TIMEOUT_S = 10.0


def _start_redis(binary: str, workdir: Path) -> tuple[subprocess.Popen, int]:
    """Start redis-server on a free loopback port without persistence and wait for PING."""
    port = _free_loopback_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(workdir), "--logfile", str(workdir / "redis.log")]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + REDIS_START_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        if _answers_ping(port):
            return proc, port
        time.sleep(0.02)
    _stop(proc)
    log = (workdir / "redis.log").read_text(errors="replace")[-2000:] if (workdir / "redis.log").exists() else ""
    raise RuntimeError(f"redis-server did not answer PING on port {port}:\n{log}")


def _stop(proc: subprocess.Popen) -> None:
    """Stop a server process: politely first, then for good."""
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def protected_redis(workdir: Path, password: str) -> Iterator[int]:
    """A redis-server requiring ``password`` (given on stdin, never on its command line) on a
    free loopback port, stopped on exit; its port."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    workdir.mkdir(parents=True, exist_ok=True)
    port = _free_loopback_port()
    proc = subprocess.Popen([binary, "-", "--port", str(port), "--bind", "127.0.0.1", "--save",
                             "", "--dir", str(workdir)], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.stdin.write(f"requirepass {password}\n".encode())
    proc.stdin.close()  # the end of its config
    try:
        client = redis.Redis(port=port, password=password, socket_timeout=1)
        deadline = time.monotonic() + REDIS_START_TIMEOUT_S
        while not _pings(client):
            assert time.monotonic() < deadline, "the password-protected redis did not start"
            time.sleep(0.02)
        client.close()
        yield port
    finally:
        _stop(proc)


def _pings(client: redis.Redis) -> bool:
    """Whether the server answers PING (after AUTH)."""
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real redis-server, private to this test session (skips if it is not installed)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server) - skipping Redis tests")
    for attempt in range(3):  # another process may grab the free port before the server binds it
        try:
            proc, port = _start_redis(binary, tmp_path_factory.mktemp("redis"))
            break
        except RuntimeError:
            if attempt == 2:
                raise
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(proc)


