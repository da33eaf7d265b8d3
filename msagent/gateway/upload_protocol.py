"""Uploads answered inside uvicorn's HTTP protocol: the request goes from the parser straight
to the upload handler, and its answer back to the socket in one write.

Hand-written because no server layer is thinner: :class:`~msagent.gateway.fast_upload.
UploadFastPath` already skips FastAPI, yet on the way there and back uvicorn builds an ASGI
scope, a request-response cycle with its event, receive and send messages, and Starlette a
``Response`` that uvicorn writes in two socket writes after checking every header. Under load
that plumbing cost about as much of the gateway's one core as the upload's own checks.

:class:`UploadProtocol` is uvicorn's ``HttpToolsProtocol`` (``uvicorn.Config(http=...)``) with
one change: a ``POST /v1/games/{game}/episodes`` that arrives while nothing else is in flight on
its connection is answered by the route's own :class:`~msagent.gateway.uploads.Uploads` (the
same checks and refusals, in the same order). A body that came whole in the read that ended
its headers is answered synchronously, its answer written from the group commit's done
callback; one that goes on in later reads by the route's coroutine, which reads the chunks as
they come (a body past the cap is refused having read at most the cap plus one chunk).
Everything else, pipelined requests included, takes uvicorn's own path, and so to the ASGI
app. Keep-alive, ``Expect: 100-continue``, flow control, client disconnects and graceful
shutdown behave as uvicorn's.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

import httptools
from starlette.requests import ClientDisconnect
from starlette.responses import Response
from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
from uvicorn.protocols.http.httptools_impl import STATUS_LINE

from msagent.gateway.fast_upload import UPLOAD_PATH, answer_upload
from msagent.gateway.http_limits import BoundedHttpProtocol, state_of_app
from msagent.gateway.uploads import Uploads

_CLOSE = b"connection: close\r\n"


class DirectUpload:
    """One upload on the direct path: the handler's request (headers, body chunks) and, in
    uvicorn's ``cycle`` slot of the connection, the state uvicorn reads of a cycle.

    Args:
        protocol: The connection's protocol.
        game: The game of the upload's path.
        headers: The request's headers (lower-case names; the first of repeated ones).
        keep_alive: Whether the connection stays open after the answer.
        expect_100: Whether the client waits for ``100 Continue`` before its body.
    """

    def __init__(self, protocol: UploadProtocol, game: str, headers: dict[str, str],
                 keep_alive: bool, expect_100: bool) -> None:
        self.protocol = protocol
        self.game = game
        self.headers = headers
        self.keep_alive = keep_alive
        self.expect_100 = expect_100
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.complete = False  # the whole body has arrived
        self.response_complete = False  # read by uvicorn (pipelining, shutdown)
        self.disconnected = False
        self.started = False  # answered (or being answered) already
        self.message_event = self  # connection_lost calls .set() on it
        self._waiter: asyncio.Future[None] | None = None

    def add(self, chunk: bytes) -> None:
        """A body chunk from the parser (dropped once the answer is out)."""
        if self.response_complete:
            return
        self.chunks.append(chunk)
        self.buffered += len(chunk)
        if self.buffered > HIGH_WATER_LIMIT:
            self.protocol.flow.pause_reading()
        self.set()

    def end(self) -> None:
        """The body is complete."""
        self.complete = True
        self.set()

    def body(self) -> bytes:
        """The body received so far, as one bytes object (taken out of the buffer)."""
        chunks, self.chunks, self.buffered = self.chunks, deque(), 0
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def set(self) -> None:
        """Wake the handler waiting for body (also: the connection was lost)."""
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def stream(self) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive; ClientDisconnect when the client goes away."""
        while True:
            while self.chunks:
                chunk = self.chunks.popleft()
                self.buffered -= len(chunk)
                yield chunk
            if self.complete:
                return
            if self.disconnected:
                raise ClientDisconnect()
            await self._more()

    async def _more(self) -> None:
        """Wait for the next chunk (sending ``100 Continue`` first if the client asked)."""
        transport = self.protocol.transport
        if self.expect_100 and not transport.is_closing():
            transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        self.expect_100 = False
        self.protocol.flow.resume_reading()
        self._waiter = asyncio.get_running_loop().create_future()
        await self._waiter


class UploadProtocol(BoundedHttpProtocol):
    """uvicorn's httptools protocol with the gateway's HTTP bounds, answering uploads without
    the ASGI round (see the module docstring) through the app's ``state.uploads``, if it has
    one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.uploads: Uploads | None = (state_of_app(self.app, "uploads")
                                        if self.limit_concurrency is None else None)
        self._receiving: DirectUpload | None = None

    def data_received(self, data: bytes) -> None:
        """Parse; an upload whose body goes on in later reads is then answered by the
        coroutine, which reads the rest as it comes (auth and caps checked first)."""
        super().data_received(data)
        upload = self._receiving
        if upload is not None and not upload.started and not self.transport.is_closing():
            self._start_coroutine(upload)

    def on_message_begin(self) -> None:
        """A new request: not a direct upload until its headers say so."""
        self._receiving = None
        super().on_message_begin()

    def start_request(self) -> None:
        """Start a direct upload, or hand the request to uvicorn."""
        game = self._direct_game()
        if game is None:
            super().start_request()
            return
        headers = {name.decode("latin-1"): value.decode("latin-1")
                   for name, value in reversed(self.headers)}
        upload = DirectUpload(self, game, headers, self.parser.should_keep_alive(),
                              self.expect_100_continue)
        self.cycle = self._receiving = upload  # type: ignore[assignment]

    def _direct_game(self) -> str | None:
        """The game of an upload this connection can answer directly, else None."""
        if (self.uploads is None or self.parser.get_method() != b"POST"
                or self.parser.should_upgrade() or self.parser.get_http_version() != "1.1"
                or not (self.cycle is None or self.cycle.response_complete)):
            return None
        path = httptools.parse_url(self.url).path.decode("ascii")
        if "%" in path:
            path = urllib.parse.unquote(path)
        found = UPLOAD_PATH.fullmatch(self.root_path + path)
        return None if found is None else found[1]

    def on_body(self, body: bytes) -> None:
        """Body of a direct upload to it (its idle clock started again); else uvicorn's."""
        if self._receiving is None:
            super().on_body(body)
        else:
            self.deadline = self.loop.time() + self.limits.body_idle_timeout_s
            self._receiving.add(body)

    def on_message_complete(self) -> None:
        """A direct upload's body is complete: answer it here unless its coroutine runs;
        else uvicorn's."""
        upload = self._receiving
        if upload is None:
            super().on_message_complete()
            return
        self.waiting = self._receiving = None
        upload.end()
        if upload.started:
            return
        assert self.uploads is not None
        if not self.uploads.synchronous:  # the stream's consumer group needs the coroutine
            self._start_coroutine(upload)
            return
        upload.started = True
        answer = self.uploads.now(upload.game, upload.headers, upload.body)
        if answer is None:  # the client's shared rate limit needs Redis
            self._start_coroutine(upload)
        elif isinstance(answer, Response):
            self._write(upload, answer)
        else:
            answer.add_done_callback(lambda commit: self._write(
                upload, self.uploads.answer(upload.game, commit)))  # type: ignore[union-attr]

    def _start_coroutine(self, upload: DirectUpload) -> None:
        """Answer the upload with the route's coroutine, reading the body as it arrives."""
        upload.started = True
        task = self.loop.create_task(self._answer(upload))
        task.add_done_callback(self.tasks.discard)
        self.tasks.add(task)

    async def _answer(self, upload: DirectUpload) -> None:
        """Run the coroutine and write its answer."""
        assert self.uploads is not None
        response = await answer_upload(self.uploads, upload.game, upload,
                                       f"/v1/games/{upload.game}/episodes")
        self._write(upload, response)

    def _write(self, upload: DirectUpload, response: Response) -> None:
        """The whole answer in one write; then uvicorn's keep-alive and pipelining go on (an
        answer before the whole body arrived, a refusal, closes the connection instead: the
        rest of the body is never read)."""
        upload.response_complete = True
        if upload.disconnected or self.transport.is_closing():
            return
        parts = [STATUS_LINE[response.status_code]]
        for name, value in (*self.server_state.default_headers, *response.raw_headers):
            parts += (name, b": ", value, b"\r\n")
        keep_alive = upload.keep_alive and upload.complete
        if not keep_alive:
            parts.append(_CLOSE)
        parts += (b"\r\n", response.body)
        self.transport.write(b"".join(parts))
        if not keep_alive:
            self.transport.close()
        self.on_response_complete()

