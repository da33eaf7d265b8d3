"""The hostile-client benchmark's client side: one raw loopback connection per case (asyncio
streams; no HTTP library, which would refuse to send most of these bytes), its pieces written
as the case says while whatever the gateway answers is read, and the answers split into
status, headers and body.

Hand-written because no HTTP client sends malformed requests or reports the raw bytes of
what came back.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

from hostile_cases import Case


@dataclass
class Answer:
    """One HTTP response as received."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes
    raw: bytes = b""  # status line, headers and body as received


@dataclass
class Outcome:
    """What became of one case: the answers, every raw byte of them, how it ended."""

    answers: list[Answer] = field(default_factory=list)
    raw: bytes = b""
    ended: str = ""  # "closed" (EOF), "answered" (all expected answers), "timeout", an error
    seconds: float = 0.0


async def send(host: str, port: int, case: Case, methods: list[str]) -> Outcome:
    """Run one case: connect, write its pieces, read its answers (``methods``: those of the
    requests as the reference reads them, for answers to HEAD, which have no body)."""
    start = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except (OSError, TimeoutError) as exc:
        return Outcome(ended=f"connect failed: {type(exc).__name__}")
    collected = _Collector(case, methods)
    writing = asyncio.create_task(_write(writer, case, collected))
    try:
        await collected.read(reader, writing)
    finally:
        writing.cancel()
        with contextlib.suppress(BaseException):
            await writing
        writer.transport.abort()  # RST, not a lingering FIN_WAIT: thousands of cases
    collected.outcome.seconds = time.perf_counter() - start
    return collected.outcome


async def _write(writer: asyncio.StreamWriter, case: Case, collected: _Collector) -> None:
    """The case's pieces, ``pause_s`` apart, until the gateway closes the connection."""
    try:
        for i, piece in enumerate(case.pieces):
            if i and case.pause_s:
                await asyncio.sleep(case.pause_s)
            if collected.eof:
                return
            if piece:
                writer.write(piece)
                await writer.drain()
    except (ConnectionError, OSError):
        pass  # the gateway closed while the client was still writing (an early refusal)


class _Collector:
    """Reads a case's answers as they come."""

    def __init__(self, case: Case, methods: list[str]) -> None:
        self.case, self.methods = case, methods
        self.outcome = Outcome()
        self.buffer = bytearray()
        self.eof = False

    async def read(self, reader: asyncio.StreamReader, writing: asyncio.Task) -> None:
        """Until EOF, the expected answers, or ``wait_s`` after the last piece is written."""
        if self.case.read_delay_s:
            await asyncio.sleep(self.case.read_delay_s)
        deadline: float | None = None
        while True:
            if deadline is None and writing.done():
                deadline = time.perf_counter() + self.case.wait_s
            timeout = 0.25 if deadline is None else deadline - time.perf_counter()
            if timeout <= 0:
                self._parse(final=True)  # a partial answer is still an answer to judge
                self.outcome.ended = "timeout"
                return
            try:
                chunk = await asyncio.wait_for(reader.read(1 << 16), timeout)
            except TimeoutError:
                continue
            except (ConnectionError, OSError) as exc:
                chunk, self.outcome.ended = b"", f"reset ({type(exc).__name__})"
            if self._took(chunk):
                return

    def _took(self, chunk: bytes) -> bool:
        """Add a read's bytes; whether reading is over."""
        if not chunk:
            self.eof = True
            self._parse(final=True)
            self.outcome.ended = self.outcome.ended or "closed"
            return True
        self.outcome.raw += chunk
        self.buffer += chunk
        self._parse(final=False)
        if len(self.outcome.answers) >= self.case.expect:
            self.outcome.ended = "answered"
            return True
        return False

    def _parse(self, final: bool) -> None:
        """Move every complete answer from the buffer to the outcome."""
        while self.buffer:
            head_method = self.methods[len(self.outcome.answers)] \
                if len(self.outcome.answers) < len(self.methods) else "GET"
            parsed = parse_answer(bytes(self.buffer), head_method == "HEAD", final)
            if parsed is None:
                return
            answer, used = parsed
            del self.buffer[:used]
            if not 100 <= answer.status < 200:  # 100 Continue precedes the real answer
                self.outcome.answers.append(answer)


def parse_answer(data: bytes, to_head: bool, final: bool) -> tuple[Answer, int] | None:
    """The first response in the bytes and how many bytes it used; None while incomplete
    (at EOF (``final``), a response without a length takes the rest; garbage becomes a
    status-0 answer)."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return (Answer(0, [], data, data), len(data)) if final else None
    lines = data[:end].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers = [(n.strip().lower(), v.strip()) for n, _, v in
               (line.partition(":") for line in lines[1:])]
    length = next((v for n, v in headers if n == "content-length"), None)
    start = end + 4
    if to_head or 100 <= status < 200 or status in (204, 304):
        size = 0
    elif length is not None and length.isdigit():
        size = int(length)
    elif final:
        size = len(data) - start
    else:
        return None
    if len(data) < start + size:
        return (Answer(status, headers, data[start:], data), len(data)) if final else None
    return Answer(status, headers, data[start:start + size], data[:start + size]), start + size
