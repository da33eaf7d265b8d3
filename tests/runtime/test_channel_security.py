"""The direct channel against hostile local peers: a silent peer, a peer of another user, and a
server that never answers. Real processes and abstract Unix sockets throughout."""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from msagent.runtime import channel
from msagent.runtime.backend import Route
from msagent.runtime.channel import ChannelClients
from msagent.runtime.channel_server import MAX_HANDSHAKES
from tests.runtime.channel_peers import SILENT_PEER

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="abstract Unix sockets are Linux-only")
ROOT = Path(__file__).resolve().parents[2]
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def _bounded(fn: Callable[[], Any], seconds: float) -> Any:
    """``fn()``'s result, or TimeoutError if it has not returned within ``seconds`` (it runs
    in a daemon thread, so a hang on the old code ends with the test)."""
    box: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: box.put(fn()), daemon=True).start()
    try:
        return box.get(timeout=seconds)
    except queue.Empty:
        raise TimeoutError(f"no answer within {seconds} s") from None


@pytest.fixture
def server() -> Iterator[tuple[str, bytes]]:
    """A ChannelServer serving an Echo in its own process: its (address, key)."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.runtime.channel_peers"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        info = json.loads(proc.stdout.readline())
        yield bytes.fromhex(info["address"]).decode(), bytes.fromhex(info["key"])
    finally:
        proc.kill()
        proc.wait()


def _silent_peer(address: str, wait_s: float, prefix: list[str] | None = None,
                 python: str = sys.executable) -> subprocess.Popen:
    """A process (as another user with ``prefix``) connected to ``address`` and silent."""
    peer = subprocess.Popen([*(prefix or []), python, "-I", "-c", SILENT_PEER,
                             address.encode().hex(), str(wait_s)],
                            stdout=subprocess.PIPE, text=True)
    assert peer.stdout.readline().strip() == "connected"
    return peer


def _report(peer: subprocess.Popen, seconds: float) -> dict[str, Any]:
    """What the silent peer saw: {"eof", "bytes", "after_s"}."""
    try:  # readline, not communicate: the report may already sit in the pipe's read buffer
        line = _bounded(peer.stdout.readline, seconds)
    finally:
        peer.kill()
        peer.wait()
    assert line, f"the peer exited with {peer.returncode} and said nothing"
    return json.loads(line)


def _caller(address: str, key: bytes) -> tuple[ChannelClients, Route]:
    """A caller's channel clients and a route to the instance at ``address``."""
    return ChannelClients(lambda route: (address, key)), Route("Echo#0", None)


def test_a_silent_peer_does_not_stop_other_callers(server: tuple[str, bytes]) -> None:
    address, key = server
    peer = _silent_peer(address, wait_s=30.0)
    try:
        time.sleep(0.2)  # the server has accepted it
        clients, route = _caller(address, key)
        start = time.monotonic()
        answers = _bounded(lambda: [clients.call(route, "echo", (i,), {}) for i in range(5)],
                           seconds=3.0)
        assert answers == [(True, i) for i in range(5)]  # over the channel, not Ray
        assert time.monotonic() - start < 2.0
    finally:
        peer.kill()
        peer.wait()


@pytest.mark.slow
def test_calls_may_outlast_the_handshake_timeout(server: tuple[str, bytes]) -> None:
    address, key = server  # a guard: the handshake's socket timeouts end with it
    clients, route = _caller(address, key)
    seconds = channel.HANDSHAKE_TIMEOUT_S + 1.0
    assert _bounded(lambda: clients.call(route, "wait", (seconds,), {}), seconds + 5.0) == \
        (True, seconds)


@pytest.mark.slow
def test_a_silent_peer_is_closed_after_the_handshake_timeout(server: tuple[str, bytes]) -> None:
    address, _ = server
    report = _report(_silent_peer(address, wait_s=channel.HANDSHAKE_TIMEOUT_S + 5.0),
                     seconds=channel.HANDSHAKE_TIMEOUT_S + 10.0)
    assert report["eof"], report  # closed by the server, not still waiting
    assert channel.HANDSHAKE_TIMEOUT_S - 0.5 < report["after_s"] < \
        channel.HANDSHAKE_TIMEOUT_S + 2.0, report


def test_handshakes_in_flight_are_bounded(server: tuple[str, bytes]) -> None:
    address, _ = server
    silent = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
              for _ in range(MAX_HANDSHAKES + 1)]
    try:
        for sock in silent:
            sock.settimeout(3.0)
            sock.connect(address)
        assert silent[0].recv(4096)  # the first is challenged...
        assert silent[-1].recv(4096) == b""  # ...one past the bound is closed at once
    finally:
        for sock in silent:
            sock.close()


def _python_for_nobody() -> str:
    """An interpreter that ``nobody`` can run (the test's own may live under /root)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running a peer as another user needs root and setpriv (util-linux)")
    for python in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([*NOBODY, python, "-I", "-c", "pass"],
                          capture_output=True).returncode == 0:
            return python
    pytest.skip("no Python interpreter that the user nobody may run")


def test_a_peer_of_another_user_is_refused_at_once(server: tuple[str, bytes]) -> None:
    python = _python_for_nobody()
    address, key = server
    report = _report(_silent_peer(address, wait_s=3.0, prefix=NOBODY, python=python),
                     seconds=10.0)
    assert report["eof"] and report["bytes"] == 0, report  # closed before any challenge
    assert report["after_s"] < 1.0, report
    clients, route = _caller(address, key)
    assert _bounded(lambda: clients.call(route, "echo", ("still",), {}), 3.0) == (True, "still")


@pytest.mark.slow
def test_a_caller_gives_up_on_a_server_that_never_answers_and_uses_ray() -> None:
    address = f"\0msagent-test-{secrets.token_hex(8)}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as mute:
        mute.bind(address)
        mute.listen()  # connections complete in the kernel; nothing is ever said
        clients, route = _caller(address, secrets.token_bytes(32))
        start = time.monotonic()
        sent = _bounded(lambda: clients.call(route, "echo", (1,), {}),
                        seconds=channel.HANDSHAKE_TIMEOUT_S + 5.0)
        assert sent == (False, None)  # the caller goes the Ray way
        assert route.channel is False  # for this route from now on
        assert time.monotonic() - start < channel.HANDSHAKE_TIMEOUT_S + 1.5
