"""The instance side of a direct channel: one serving loop for every caller's connection.

One thread waits on all connections at once, reads every request that is ready and serves
them together: a batched method's requests become one batch without any thread hand-off.
The first design, a thread per connection, cost each request two or three thread switches
and a fight for the GIL and the instance lock. Measured on this two-core machine with two
client processes sending 16-row CartPole predicts (no Ray): 400 µs a round trip and 200 µs
of server CPU per request with the loop, against 690-970 µs and 360-500 µs with a thread
per connection. In the full CartPole run the server's CPU fell from 42 % to 36 % of a core
at the same env steps/s: there the round trip is bound by the machine's scheduling, not by
the server.

Methods registered ``concurrent=True`` may block for long, so they run in their own
threads and answer from there; a caller has one call in flight per connection, so a
connection never carries two replies at once.

A connection joins the loop only after its key handshake, which runs in a short-lived thread of
its own with a timeout: ``Listener.accept`` ran it inline, and another local user who connected
and stayed silent stopped a central-inference run (0 env steps/s) until they hung up. Peers of
another user are closed before any handshake, and at most ``MAX_HANDSHAKES`` run at once.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import struct
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple

from msagent.runtime.channel import BROKEN, handshake, recv_message, send_reply

log = logging.getLogger("msagent.runtime")
MAX_HANDSHAKES = 32
"""Handshakes in flight at most; a connection past them is closed at once (its caller uses Ray)."""
_UCRED = struct.Struct("iII")
"""Linux's struct ucred (pid, uid, gid), what SO_PEERCRED reads."""


class _Request(NamedTuple):
    """One call read from a connection."""

    conn: Connection
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def serve_channel(core: Any) -> ChannelServer | None:
    """A channel serving ``core``, or None where there is none (not Linux, or no socket)."""
    if not sys.platform.startswith("linux"):  # abstract socket names are Linux-only
        return None
    try:
        return ChannelServer(core)
    except OSError:
        log.warning("no direct channel for %s; callers use Ray", core.instance_id, exc_info=True)
        return None


class ChannelServer:
    """Accepts connections in one thread, authenticates each in its own, serves all in one."""

    def __init__(self, core: Any) -> None:
        """Listen on a fresh abstract socket with a fresh key; serve ``core``'s methods."""
        self._core = core
        self.key = secrets.token_bytes(32)
        self.address = f"\0msagent-{secrets.token_hex(12)}"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(self.address)
            self._listener.listen(socket.SOMAXCONN)
        except OSError:
            self._listener.close()
            raise
        self._handshakes = threading.BoundedSemaphore(MAX_HANDSHAKES)
        self._warned_user = False
        self._conns: list[Connection] = []
        self._accepted: list[Connection] = []
        self._accepted_lock = threading.Lock()
        self._wake_r, self._wake_w = socket.socketpair()
        threading.Thread(target=self._accept, name="channel:accept", daemon=True).start()
        threading.Thread(target=self._loop, name="channel:serve", daemon=True).start()

    def _accept(self) -> None:
        """Forever: take a connection (a caller thread) and start its handshake elsewhere."""
        while True:
            try:
                sock, _ = self._listener.accept()
            except OSError:  # e.g. out of file descriptors: wait a little rather than spin
                log.debug("channel accept failed", exc_info=True)
                time.sleep(0.1)
                continue
            if not self._admit(sock):
                sock.close()
                continue
            try:
                threading.Thread(target=self._handshake, args=(sock,), daemon=True,
                                 name="channel:handshake").start()
            except RuntimeError:  # no thread to be had: this caller uses Ray
                self._handshakes.release()
                sock.close()

    def _admit(self, sock: socket.socket) -> bool:
        """Whether to start ``sock``'s handshake: its peer runs as this process's user (any
        other is closed before seeing a byte) and a handshake slot is free (taken here)."""
        try:
            pid, uid, _ = _UCRED.unpack(sock.getsockopt(
                socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
        except OSError:
            return False
        if uid != os.geteuid():
            level = logging.DEBUG if self._warned_user else logging.WARNING
            self._warned_user = True
            log.log(level, "channel refused a connection of process %d run by uid %d (this "
                    "process runs as uid %d)", pid, uid, os.geteuid())
            return False
        if not self._handshakes.acquire(blocking=False):
            log.debug("channel refused a connection: %d handshakes in flight", MAX_HANDSHAKES)
            return False
        return True

    def _handshake(self, sock: socket.socket) -> None:
        """Authenticate a connection (given up after HANDSHAKE_TIMEOUT_S of silence) and hand
        it to the serving loop."""
        try:
            conn = handshake(sock, self.key, serving=True)
        except Exception:  # a bad key, a silent peer or a caller that went away
            log.debug("channel handshake failed", exc_info=True)
            return
        finally:
            self._handshakes.release()
        with self._accepted_lock:
            self._accepted.append(conn)
        self._wake_w.send(b"\0")

    def _loop(self) -> None:
        """Forever: wait for requests on any connection, read them all, serve them."""
        while True:
            requests = self._read(wait([self._wake_r, *self._conns]))
            if requests:
                self._serve(self._gather(requests))

    def _read(self, ready: list[Any]) -> list[_Request]:
        """One request from each ready connection; new connections join, closed ones leave."""
        requests = []
        for conn in ready:
            if conn is self._wake_r:
                self._adopt()
                continue
            try:
                requests.append(_Request(conn, *recv_message(conn)))
            except BROKEN:
                self._drop(conn)
            except Exception:  # a malformed message ends its own connection, not the loop
                log.warning("dropping a channel connection that sent a malformed message",
                            exc_info=True)
                self._drop(conn)
        return requests

    def _drop(self, conn: Connection) -> None:
        """Stop serving a connection and close it."""
        self._conns.remove(conn)
        conn.close()

    def _adopt(self) -> None:
        """Take the connections accepted since the last wake-up into the loop."""
        self._wake_r.recv(4096)
        with self._accepted_lock:
            self._conns.extend(self._accepted)
            self._accepted.clear()

    def _gather(self, requests: list[_Request]) -> list[_Request]:
        """More requests while the first one's method batches and its batch is neither full
        nor past ``max_wait_ms``."""
        spec = self._core.specs.get(requests[0].method)
        if spec is None or spec.batch <= 1 or spec.max_wait_ms <= 0:
            return requests
        deadline = time.monotonic() + spec.max_wait_ms / 1000.0
        while len(requests) < spec.batch and (left := deadline - time.monotonic()) > 0:
            busy = {id(r.conn) for r in requests}
            idle = [c for c in self._conns if id(c) not in busy]
            requests += self._read(wait([self._wake_r, *idle], timeout=left))
        return requests

    def _serve(self, requests: list[_Request]) -> None:
        """Answer the requests, grouped by method in arrival order."""
        by_method: dict[str, list[_Request]] = {}
        for request in requests:
            by_method.setdefault(request.method, []).append(request)
        for method, group in by_method.items():
            spec = self._core.specs.get(method)
            if spec is not None and spec.concurrent:
                for request in group:
                    threading.Thread(target=self._answer_one, args=(request,), daemon=True,
                                     name="channel:concurrent").start()
                continue
            try:
                outcomes = self._core.invoke_many(method, [(r.args, r.kwargs) for r in group])
            except BaseException as exc:  # e.g. an unknown method: every caller learns it
                outcomes = [(False, exc)] * len(group)
            self._reply(group, outcomes)

    def _answer_one(self, request: _Request) -> None:
        """Serve one call of a concurrent method in this thread and reply."""
        self._reply([request], self._core.invoke_many(request.method,
                                                      [(request.args, request.kwargs)]))

    def _reply(self, group: list[_Request], outcomes: list[tuple[bool, Any]]) -> None:
        """Send each caller its outcome; an error carries the server's traceback once."""
        noted: set[int] = set()
        for request, (ok, value) in zip(group, outcomes):
            if not ok and id(value) not in noted:
                noted.add(id(value))
                value.add_note("remote traceback:\n" + "".join(
                    traceback.format_exception(value)).rstrip())
            send_reply(request.conn, (ok, value), request.method)
