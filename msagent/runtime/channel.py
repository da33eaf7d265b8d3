"""Direct channels: same-node calls of ``direct`` methods over a Unix socket instead of Ray.

This module holds the caller side and the wire format; ``channel_server`` the instance side.

A Ray actor call costs 2-3 ms of round trip on a small two-core machine (a dozen thread
hand-offs in Ray's core workers); a request/response over a Unix socket between the same two
processes costs about 0.25 ms. Methods registered with ``direct=True`` (an inference server's
``predict``, asked once per env step) are therefore served, for callers on the instance's own
node, by a serving loop that calls the instance core as a Ray call would: same lock, same
batching, same statistics. Callers on other nodes still use Ray.

The socket is in Linux's abstract namespace (no file to clean up) and protected by a random
key that only travels through Ray; like Ray itself, the channel moves pickles, so the machine
must be trusted.
"""

from __future__ import annotations

import logging
import pickle
import threading
from collections.abc import Callable
from multiprocessing.connection import Client, Connection
from typing import Any

from msagent.errors import SerializationError
from msagent.runtime.backend import InstanceGone, Route

log = logging.getLogger("msagent.runtime")
BROKEN = (EOFError, ConnectionError, OSError)
"""What a connection raises when the process at its other end is gone."""


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
    # trusted: a same-node abstract socket whose peer proved the random key that only
    # travels through Ray (the Listener's authkey handshake); as trusted as Ray's own pickles
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
                conn = conns[address] = Client(address, family="AF_UNIX", authkey=key)
            except Exception as exc:  # e.g. another network namespace: Ray for this route
                log.warning("no direct channel to %s (%r); using Ray", route.instance_id, exc)
                route.channel = False
        return conn

    def _forget(self, route: Route) -> None:
        """Drop this thread's broken connection to the route's instance."""
        conns = self._local.__dict__.get("conns", {})
        conn = conns.pop(route.channel[0], None) if route.channel else None
        if conn is not None:
            conn.close()
