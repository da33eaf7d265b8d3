"""A lean HTTP/1.1 load generator for loopback benchmarks: keep-alive connections, each with
one request in flight, requests written as prebuilt bytes and answers parsed just enough to
read their status and skip their body.

Hand-written because a full client is the wrong tool for a load generator on a 2-core
machine: aiohttp spent about 300 µs of CPU per upload in ``benchmarks/gateway.py``, more than
the gateway under test, on the same two cores. This one spends a small fraction of that, as
wrk-style load generators do, so the figures measure the server rather than the client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class Connection(asyncio.Protocol):
    """One keep-alive connection: :meth:`request` writes a request and awaits its status."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[int] | None = None
        self.closed: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport to write requests on."""
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        """Collect bytes; resolve the waiter once a whole answer has arrived."""
        self.buffer += data
        status = self._complete_answer()
        if status is not None and self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(status)

    def connection_lost(self, exc: Exception | None) -> None:
        """Fail the request in flight: the server closed the connection."""
        self.closed = exc or ConnectionError("the server closed the connection")
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(self.closed)

    async def request(self, request: bytes) -> int:
        """Send one whole request and return the answer's status."""
        if self.closed is not None:
            raise self.closed
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.waiter

    def _complete_answer(self) -> int | None:
        """The status of a complete answer at the buffer's start (consumed), else None."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = bytes(self.buffer[:end]).lower()
        length = 0
        for line in head.split(b"\r\n")[1:]:
            if line.startswith(b"content-length:"):
                length = int(line[15:])
        if len(self.buffer) < end + 4 + length:
            return None
        del self.buffer[:end + 4 + length]
        return int(head[9:12])


def request_head(host: str, port: int, path: str, headers: dict[str, str], length: int) -> bytes:
    """The bytes of a POST request's head for a body of ``length`` bytes."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {length}",
             *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def post_all(host: str, port: int, path: str, headers: dict[str, str],
                   bodies: list[bytes], concurrency: int,
                   on_status: Callable[[int, float], None]) -> float:
    """POST every body over ``concurrency`` connections; ``on_status(status, seconds)`` per
    answer; the seconds it all took (the requests' bytes are built before the clock starts)."""
    loop = asyncio.get_running_loop()
    queue = [request_head(host, port, path, headers, len(body)) + body
             for body in reversed(bodies)]

    async def worker() -> None:
        _, conn = await loop.create_connection(Connection, host, port)
        try:
            while queue:
                request = queue.pop()
                t = time.perf_counter()
                status = await conn.request(request)
                on_status(status, time.perf_counter() - t)
        finally:
            if conn.transport is not None:
                conn.transport.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start
