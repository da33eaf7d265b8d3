"""What one HTTP connection may cost a server before any token is checked: the size of a
request's head, the time its head and body may take, how many requests it may queue, how
many connections a process holds, and which HTTP it may speak.

:class:`BoundedHttpProtocol` is uvicorn's httptools protocol (``uvicorn.Config(http=...)``)
with those bounds. uvicorn has none of them for httptools: it accumulates the URL and every
header however long (httptools' parser joins the pieces of a header at a cost that grows with
the square of its length: one 128 MiB header took 21 s of CPU), never times out a head or a
body that stops arriving, queues every pipelined request of a read, keeps reading (and
discarding) a body the app has already refused, and answers malformed requests in plain text.
Hand-written because no ASGI server bounds these for httptools, and the gateway keeps
httptools for its speed.

- A head longer than ``max_head_bytes`` is answered 431 and the connection closed, having
  parsed at most the cap plus one received read.
- A head not complete within ``head_timeout_s`` of the connection's start (or of the request's
  first byte, on a kept-alive connection), or a body that pauses longer than
  ``body_idle_timeout_s`` or takes longer than ``body_timeout_s`` in all while the server waits
  for it, is answered 408 and closed.
- A connection past ``max_connections`` of the process is answered 503 and closed at once; a
  connection that queues more than ``MAX_PIPELINED`` requests is closed.
- HTTP other than 1.0 and 1.1, and a transfer coding other than ``chunked``, are 400; a protocol
  upgrade is ignored on a request without a body (the connection closes after its answer) and
  refused on one with a body; malformed HTTP is a JSON 400, like every other error of the
  gateway, and is not logged (anyone can send it, at any rate).
- A response that completes before its request's body has arrived closes the connection, so
  the rest of a refused body is never read.

A refusal of a new request waits for the answers to the requests before it on the connection,
in order; a refusal of the request in flight (its body stalled) is answered at once.
Deadlines are checked by one sweep a server runs every ``SWEEP_S`` over its connections, so a
request costs a few float stores, not a timer.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

SWEEP_S = 0.5
"""How often a server looks for connections past their deadlines (their resolution)."""

MAX_PIPELINED = 32
"""Requests one connection may queue behind the one being answered (HTTP clients that
pipeline at all send a few); more: the connection is closed."""

HEAD, BODY = "head", "body"
"""What a connection waits for from its client (None: nothing, or the app)."""

_VERSIONS = ("1.1", "1.0")
_CLOSE = 0  # a refusal's status meaning: close without an answer


@dataclass(frozen=True)
class HttpLimits:
    """The bounds of :class:`BoundedHttpProtocol` (see ``[gateway]`` in the config)."""

    max_head_bytes: int = 16 * 1024
    head_timeout_s: float = 10.0
    body_idle_timeout_s: float = 10.0
    body_timeout_s: float = 120.0
    max_connections: int = 1024

    @classmethod
    def of(cls, section: Any) -> HttpLimits:
        """The limits a config section (the gateway's) declares."""
        return cls(section.max_head_bytes, section.head_timeout_s,
                   section.body_idle_timeout_s, section.body_timeout_s,
                   section.max_connections)


class _Refusal(Exception):
    """Raised in a parser callback to stop parsing and refuse the request."""

    def __init__(self, status: int, reason: str = "") -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the bounds of the module docstring, read from the
    app's ``state.http_limits`` (an :class:`HttpLimits`; the defaults when it has none).

    A subclass starts requests its own way in :meth:`start_request` (after the head's
    checks); one that takes a body itself sets ``deadline`` in ``on_body`` and ``waiting`` in
    ``on_message_complete`` as this class does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits: HttpLimits = state_of_app(self.app, "http_limits") or HttpLimits()
        self.waiting: str | None = HEAD  # what the client owes the server
        self.deadline = 0.0  # loop time by which it must arrive
        self._body_until = 0.0  # and the body's whole
        self._head_bytes = 0  # bytes of the unfinished head counted so far
        self._may_overflow = False  # this read could take a head past its cap
        self._ended = False  # refused: nothing more is parsed
        self._after: tuple[int, str] | None = None  # a refusal due once earlier answers are out

    # ---------------------------------------------------------------- the connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Count the connection (503 past the bound) and start the head's clock."""
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self.refuse(503, "too many open connections; retry shortly", b"retry-after: 1\r\n")
            return
        self.deadline = self.loop.time() + self.limits.head_timeout_s
        _Sweeper.watch(self)

    def data_received(self, data: bytes) -> None:
        """Parse, refusing a head past its cap and what the parser or a callback refuses."""
        if self._ended:
            return
        counted = self.waiting == HEAD  # all of this read is head if it stays unfinished
        self._may_overflow = (self._head_bytes if counted else 0) + len(data) > \
            self.limits.max_head_bytes
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():  # a WebSocket, where the server has them
                self.handle_websocket_upgrade()
            return  # else ignored: the connection closes after the request's answer
        except httptools.HttpParserError as exc:
            refusal = exc.__context__
            if not isinstance(refusal, _Refusal):
                refusal = _Refusal(400, "invalid HTTP request")
            self.refuse(refusal.status, refusal.reason)
            return
        if counted and self.waiting == HEAD and not self._ended:
            self._head_bytes += len(data)
            if self._head_bytes > self.limits.max_head_bytes:
                self.refuse(431, self._head_too_long())

    def send_400_response(self, msg: str) -> None:
        """uvicorn's own 400s (none left on this path, but kept in the one error shape)."""
        self.refuse(400, "invalid HTTP request")

    def on_response_complete(self) -> None:
        """An answer is out: the next queued request goes on, or a refusal that waited for
        the answers before it is written now, and the connection closed."""
        if self._after is not None and not self.pipeline:
            status, reason = self._after
            self._after = None
            self._write_refusal(status, reason)
            self.transport.close()
            return
        super().on_response_complete()

    # ---------------------------------------------------------------- parser callbacks

    def on_message_begin(self) -> None:
        """A request's first byte: its head's clock starts (unless the connection's runs)."""
        if self.waiting != HEAD:
            self.waiting, self.deadline = HEAD, self.loop.time() + self.limits.head_timeout_s
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        """The whole head arrived: refuse it if too long (measured only when the reads could
        have made it so) or of HTTP this server does not speak, else start the request and
        the body's clocks."""
        if self._may_overflow and self._head_size() > self.limits.max_head_bytes:
            raise _Refusal(431, self._head_too_long())
        if self.parser.get_http_version() not in _VERSIONS:
            raise _Refusal(400, "HTTP version not supported: speak HTTP/1.1")
        for name, value in self.headers:  # what llhttp lets through
            if name == b"transfer-encoding":
                self._check_transfer_coding(value)
        upgrade = self.parser.should_upgrade() and self._ignored_upgrade()
        now, limits = self.loop.time(), self.limits
        self.waiting, self._head_bytes = BODY, 0
        self.deadline = now + limits.body_idle_timeout_s
        self._body_until = now + limits.body_timeout_s
        self.start_request()
        if upgrade:  # the parser reads nothing after an upgrade's head
            self.cycle.keep_alive = False
        if len(self.pipeline) > MAX_PIPELINED:
            raise _Refusal(_CLOSE)

    def start_request(self) -> None:
        """Hand the request whose head is complete on (uvicorn: to the ASGI app), closing the
        connection if the response completes before the request's body has arrived."""
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and hasattr(cycle, "more_body"):
            _close_after_early_answer(cycle)

    def on_body(self, body: bytes) -> None:
        """Body bytes arrived: the idle clock starts again (subclasses that take the body
        themselves set ``deadline`` as here)."""
        self.deadline = self.loop.time() + self.limits.body_idle_timeout_s
        super().on_body(body)

    def on_message_complete(self) -> None:
        """The request is whole: the client owes nothing until its next one (subclasses
        that take the request themselves set ``waiting`` as here)."""
        self.waiting = None
        super().on_message_complete()

    # ---------------------------------------------------------------- refusals

    def overdue(self, now: float) -> None:
        """Refuse the request if its client is past a deadline (called by the sweep)."""
        if self._ended or self.waiting is None:
            return
        limits = self.limits
        if self.waiting == HEAD:
            if now >= self.deadline:
                self.refuse(408, f"request head not received within {limits.head_timeout_s:g} s")
            return
        whole = now >= self._body_until
        if now < self.deadline and not whole:
            return
        if self._server_holds_body():  # not the client's fault: wait on
            self.deadline = now + limits.body_idle_timeout_s
            self._body_until = max(self._body_until, self.deadline)
        elif whole:
            self.refuse(408, f"request body not received within {limits.body_timeout_s:g} s",
                        current=True)
        else:
            self.refuse(408, f"request body stalled for {limits.body_idle_timeout_s:g} s",
                        current=True)

    def refuse(self, status: int, reason: str, extra: bytes = b"",
               current: bool = False) -> None:
        """Answer ``{"error": reason}`` with ``connection: close`` and close, and parse no
        more. A refusal of the request in flight (``current``) goes out at once, that request
        seeing its client gone; one of a new request once the answers before it are out."""
        self._ended, self.waiting = True, None
        if status == _CLOSE:
            self.transport.close()
            return
        cycle = self.cycle
        in_flight = cycle is not None and not cycle.response_complete and \
            not cycle.disconnected
        if in_flight and not current:
            self._after = (status, reason)
            return
        if in_flight:
            cycle.disconnected = True
            cycle.message_event.set()
        if not (in_flight and getattr(cycle, "response_started", False)):
            self._write_refusal(status, reason, extra)
        self.transport.close()

    def _write_refusal(self, status: int, reason: str, extra: bytes = b"") -> None:
        """The JSON refusal with ``connection: close``, in one write."""
        if self.transport.is_closing():
            return
        body = json.dumps({"error": reason}, separators=(",", ":")).encode()
        self.transport.write(b"".join((
            STATUS_LINE[status], b"content-type: application/json\r\n", extra,
            b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body), body)))

    def _check_transfer_coding(self, value: bytes) -> None:
        """Refuse transfer codings other than chunked, and any in HTTP/1.0 (400: the RFCs'
        501 would read as the server's failure, which every 5xx of the gateway means)."""
        if value.strip().lower() != b"chunked":
            raise _Refusal(400, "transfer codings other than chunked are not supported")
        if self.parser.get_http_version() == "1.0":  # RFC 9112 6.1: faulty framing (smuggling)
            raise _Refusal(400, "HTTP/1.0 has no Transfer-Encoding")

    def _ignored_upgrade(self) -> bool:
        """Whether an upgrade the request asks for is ignored (no WebSocket here); refused
        (400) on a request with a body, which the parser would not read."""
        if self._should_upgrade():
            return False
        for name, value in self.headers:
            if name == b"transfer-encoding" or (name == b"content-length"
                                                and value.strip() not in (b"0", b"")):
                raise _Refusal(400, "protocol upgrades are not supported")
        return True

    def _head_size(self) -> int:
        """The bytes of the request's head (its line's URL, and its headers)."""
        return len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def _head_too_long(self) -> str:
        """The 431's reason."""
        return f"request head larger than {self.limits.max_head_bytes} bytes"

    def _server_holds_body(self) -> bool:
        """Whether the body waits on this server: reading paused (its buffer is full), or
        ``100 Continue`` not sent yet (the app has not asked for the body)."""
        cycle = self.cycle
        return bool(self.flow.read_paused or getattr(cycle, "waiting_for_100_continue", False)
                    or getattr(cycle, "expect_100", False))


def _close_after_early_answer(cycle: Any) -> None:
    """Make an ASGI request-response cycle close its connection when its response starts
    before the request's body is complete (uvicorn would read and discard the rest)."""
    send = cycle.send

    async def guarded(message: Any) -> None:
        """The cycle's own send, after dropping keep-alive if the body is still coming."""
        if cycle.more_body and not cycle.response_started:
            cycle.keep_alive = False
        await send(message)

    cycle.send = guarded


class _Sweeper:
    """One per server (its ``ServerState``): every ``SWEEP_S`` it refuses the connections
    whose clients are past their deadlines."""

    def __init__(self, loop: asyncio.AbstractEventLoop, connections: set[Any]) -> None:
        self.loop, self.connections = loop, connections
        self.loop.call_later(SWEEP_S, self.sweep)

    @classmethod
    def watch(cls, protocol: BoundedHttpProtocol) -> None:
        """Make sure the protocol's server has a sweep running."""
        state = protocol.server_state
        if getattr(state, "msagent_sweeper", None) is None:
            state.msagent_sweeper = cls(protocol.loop, protocol.connections)  # type: ignore

    def sweep(self) -> None:
        """Refuse overdue connections, then sweep again in ``SWEEP_S``."""
        now = self.loop.time()
        for protocol in list(self.connections):
            if isinstance(protocol, BoundedHttpProtocol):
                protocol.overdue(now)
        if not self.loop.is_closed():
            self.loop.call_later(SWEEP_S, self.sweep)


def state_of_app(app: Any, name: str) -> Any:
    """An attribute of the app's ``state`` (looking through uvicorn's wrappers), or None."""
    for _ in range(8):
        value = getattr(getattr(app, "state", None), name, None)
        if value is not None:
            return value
        app = getattr(app, "app", None)
        if app is None:
            return None
    return None
