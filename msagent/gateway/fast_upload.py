"""The upload route's fast path: ``POST /v1/games/{game}/episodes`` answered by a pure ASGI
middleware ahead of FastAPI's routing, exception middleware and dependency solving.

Hand-written because no library layer is thinner: under load, those per-request layers cost
about as much CPU as the upload's own work (reading, checking, the Redis call), and the
gateway's one process is what limits uploads/s. The route stays declared in FastAPI (its
OpenAPI entry; the same handler behind it), and every other request goes through FastAPI.
Answers are the same as the route's: a refusal is ``{"error": reason}`` with its status, and
anything unexpected a logged generic 500, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable

from starlette.requests import ClientDisconnect
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from msagent.gateway.body import UploadRequest
from msagent.gateway.errors import Refused
from msagent.gateway.handlers import error_response, unexpected_on

UPLOAD_ROUTE = "/v1/games/{game}/episodes"
"""The upload route, as FastAPI declares it."""

UPLOAD_PATH = re.compile(UPLOAD_ROUTE.replace("{game}", "([^/]+)"))
"""The upload route's path; the game is what Starlette's ``{game}`` would match."""

Handler = Callable[[str, UploadRequest], Awaitable[Response]]


class RawUpload:
    """An upload request read straight from ASGI: a plain dict of its headers (the first of
    repeated names, as Starlette's ``Headers.get`` gives) and its body chunks. Building
    Starlette's ``Request`` and ``Headers`` for it cost several percent of the gateway's CPU.
    """

    __slots__ = ("headers", "_receive")

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.headers = {name.decode("latin-1"): value.decode("latin-1")
                        for name, value in reversed(scope["headers"])}
        self._receive = receive

    async def stream(self) -> AsyncIterator[bytes]:
        """The body's chunks; ClientDisconnect when the client goes away first."""
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise ClientDisconnect()
            body = message.get("body", b"")
            if body:
                yield body
            if not message.get("more_body", False):
                return


class UploadFastPath:
    """ASGI middleware: uploads to ``handler(game, request)``, everything else to ``app``.

    Args:
        app: The FastAPI app (and its middleware) that serves every other request.
        handler: The upload handler the FastAPI route also calls.
    """

    def __init__(self, app: ASGIApp, handler: Handler) -> None:
        self.app = app
        self.handler = handler

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer an upload here; pass anything else on."""
        found = (UPLOAD_PATH.fullmatch(scope["path"])
                 if scope["type"] == "http" and scope["method"] == "POST" else None)
        if found is None:
            await self.app(scope, receive, send)
            return
        response = await answer_upload(self.handler, found[1], RawUpload(scope, receive),
                                       scope["path"])
        await response(scope, receive, send)


async def answer_upload(handler: Handler, game: str, request: UploadRequest,
                        path: str) -> Response:
    """The handler's answer to an upload: its response, a refusal in the one error shape, or a
    logged generic 500 (never a traceback)."""
    try:
        return await handler(game, request)
    except Refused as exc:
        return error_response(exc.status, exc.reason, exc.headers)
    except Exception as exc:
        return unexpected_on("POST", path, exc)
