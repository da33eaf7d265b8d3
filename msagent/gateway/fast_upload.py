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
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from msagent.gateway.errors import Refused
from msagent.gateway.handlers import refused, unexpected

UPLOAD_ROUTE = "/v1/games/{game}/episodes"
"""The upload route, as FastAPI declares it."""

UPLOAD_PATH = re.compile(UPLOAD_ROUTE.replace("{game}", "([^/]+)"))
"""The upload route's path; the game is what Starlette's ``{game}`` would match."""

Handler = Callable[[str, Request], Awaitable[Response]]


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
        request = Request(scope, receive)
        try:
            response = await self.handler(found[1], request)
        except Refused as exc:
            response = await refused(request, exc)
        except Exception as exc:
            response = await unexpected(request, exc)
        await response(scope, receive, send)
