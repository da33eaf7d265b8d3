"""Direct channels: same-node calls of ``direct`` methods over a Unix socket instead of Ray.

This module holds the caller side and the wire format; ``channel_server`` the instance side.

A Ray actor call costs 2-3 ms of round trip on a small two-core machine (a dozen thread
hand-offs in Ray's core workers); a request/response over a Unix socket between the same two
processes costs about 0.25 ms. Methods registered with ``direct=True`` (an inference server's
``predict``, asked once per env step) are therefore served, for callers on the instance's own
node, by a serving loop that calls the instance core as a Ray call would: same lock, same
batching, same statistics. Callers on other nodes still use Ray.

The socket is in Linux's abstract namespace (no file to clean up), which any local user can
connect to: the server closes a peer of another user at once (its ``SO_PEERCRED``) and the
others must prove a random key that only travels through Ray. Every connect and every step of
that handshake is bounded by ``HANDSHAKE_TIMEOUT_S`` on both sides, so a peer that stays silent
costs a timeout, never a stalled channel; a caller that gives up uses Ray. Like Ray itself, the
channel moves pickles, so the machine's user must be trusted.
"""

from __future__ import annotations

import logging
import pickle
import socket
import struct
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge
from typing import Any

from msagent.errors import SerializationError
from msagent.runtime.backend import InstanceGone, Route

log = logging.getLogger("msagent.runtime")
BROKEN = (EOFError, ConnectionError, OSError)
"""What a connection raises when the process at its other end is gone."""
HANDSHAKE_TIMEOUT_S = 5.0
"""How long a connect, or any one read or write of the key handshake, may block on either side
(the handshake is a few dozen bytes each way and takes well under a millisecond)."""


def connect(address: str, key: bytes) -> Connection:
    """A connection to the channel at ``address``, given up after ``HANDSHAKE_TIMEOUT_S``
    (multiprocessing's ``Client`` would wait for ever on a server that stays silent)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(HANDSHAKE_TIMEOUT_S)  # a Unix connect blocks while the backlog is full
        sock.connect(address)
    except BaseException:
        sock.close()
        raise
    return handshake(sock, key, serving=False)


def handshake(sock: socket.socket, key: bytes, serving: bool) -> Connection:
    """``sock`` as a Connection once both ends proved ``key``, or an error within the timeout.

    The challenge is multiprocessing's own (what ``Listener.accept`` and ``Client`` speak); only
    the socket handling is written here, because those two have no timeout.
    """
    conn = Connection(sock.detach())
    try:
        _io_timeout(conn, HANDSHAKE_TIMEOUT_S)
        steps = (deliver_challenge, answer_challenge) if serving else \
            (answer_challenge, deliver_challenge)
        for step in steps:
            step(conn, key)
        _io_timeout(conn, 0.0)  # calls may take as long as they take
    except BaseException:
        conn.close()
        raise
    return conn


def _io_timeout(conn: Connection, seconds: float) -> None:
    """Bound each blocking read and write on ``conn``'s socket to ``seconds`` (0: no bound)."""
    # Kernel timeouts (SO_RCVTIMEO/SO_SNDTIMEO), not socket.settimeout: Connection reads the raw
    # descriptor with os.read, which needs it blocking; a timed-out read fails with EAGAIN.
    timeval = struct.pack("ll", int(seconds), int(seconds % 1 * 1_000_000))
    with socket.fromfd(conn.fileno(), socket.AF_UNIX, socket.SOCK_STREAM) as view:  # a dup
        view.setblocking(True)
        view.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
        view.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)


def send_reply(conn: Connection, reply: tuple[bool, Any], method: str) -> bool:
    """Send a reply; an unpicklable one becomes a SerializationError. False if the caller left."""
    try:
        _send_obj(conn, reply)
        return True
    except BROKEN:
        return False
    except Exception as exc:  # pickling failed before anything was written
        error = SerializationError(f"cannot send the result of {method!r}: {exc}")
    try:
        _send_obj(conn, (False, error))
        return True
    except BROKEN:
        return False


def _send_obj(conn: Connection, obj: Any) -> None:
    """Pickle and send one message: plain ``pickle`` (protocol 5) rather than
    ``Connection.send``'s ForkingPickler, whose per-message set-up (a pickler with a copied
    dispatch table, for passing file descriptors the channel never sends) costs more than a
    small predict request's own encoding."""
    conn.send_bytes(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def recv_message(conn: Connection) -> Any:
    """Receive and unpickle one message of ``_send_obj``."""
    # trusted: a same-node abstract socket whose peer runs as this user and proved the random
    # key that only travels through Ray (``handshake``); as trusted as Ray's own pickles
    return pickle.loads(conn.recv_bytes())


class ChannelClients:
    """The caller side: one connection per (instance, calling thread), opened on first use."""

    def __init__(self, describe: Callable[[Route], tuple[str, bytes] | None]) -> None:
        """``describe(route)`` returns the instance's (address, key), or None if it has no
        channel this process can use."""
        self._describe = describe
        self._local = threading.local()
        self._lock = threading.Lock()

    def call(self, route: Route, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> tuple[bool, Any]:
        """(True, result) over the channel, or (False, None) when the route has none."""
        conn = self._connection(route)
        if conn is None:
            return False, None
        try:
            _send_obj(conn, (method, args, kwargs))
        except BROKEN as exc:
            self._forget(route)
            raise InstanceGone(f"channel to {route.instance_id} broke: {exc!r}") from None
        except Exception as exc:
            raise SerializationError(
                f"cannot send the arguments of {route.instance_id}.{method}: {exc}") from None
        return True, self._receive(route, conn)

    def _receive(self, route: Route, conn: Connection) -> Any:
        """The reply to the call just sent; a closed channel means the instance died."""
        try:
            ok, value = recv_message(conn)
        except BROKEN as exc:
            self._forget(route)
            raise InstanceGone(f"channel to {route.instance_id} broke: {exc!r}") from None
        if not ok:
            raise value
        return value

    def _connection(self, route: Route) -> Connection | None:
        """This thread's connection to the route's instance (opened now if needed)."""
        if route.channel is None:
            with self._lock:
                if route.channel is None:
                    route.channel = self._describe(route) or False
        if not route.channel:
            return None
        conns: dict[str, Connection] = self._local.__dict__.setdefault("conns", {})
        address, key = route.channel
        conn = conns.get(address)  # an address names one instance's process, never reused
        if conn is None:
            try:
                conn = conns[address] = connect(address, key)
            except Exception as exc:  # another network namespace, a timeout: Ray for the route
                log.warning("no direct channel to %s (%r); using Ray", route.instance_id, exc)
                route.channel = False
        return conn

    def _forget(self, route: Route) -> None:
        """Drop this thread's broken connection to the route's instance."""
        conns = self._local.__dict__.get("conns", {})
        conn = conns.pop(route.channel[0], None) if route.channel else None
        if conn is not None:
            conn.close()
