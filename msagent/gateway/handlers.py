"""Every error the gateway answers is ``{"error": "<reason>"}``: its own refusals, routing and
validation errors of FastAPI/Starlette, and anything unexpected (a generic 500; the traceback
goes to the server's log, never to the client)."""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from msagent.gateway.errors import Refused

_log = logging.getLogger("msagent.gateway")

MAX_REASON_CHARS = 500
"""Longest reason sent back (a reason may quote what the client sent)."""


def json_response(status: int, content: Any, headers: dict[str, str] | None = None) -> Response:
    """A JSON response; non-ASCII escaped, so any string the client sent encodes safely."""
    return Response(json.dumps(content, ensure_ascii=True, separators=(",", ":")), status,
                    headers, media_type="application/json")


def error_response(status: int, reason: str, headers: dict[str, str] | None = None) -> Response:
    """``{"error": reason}`` with the status."""
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS] + "..."
    return json_response(status, {"error": reason}, headers)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every error in the one JSON shape."""
    app.add_exception_handler(Refused, refused)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    app.add_exception_handler(Exception, unexpected)


async def refused(request: Request, exc: Exception) -> Response:
    """A refusal raised on purpose."""
    assert isinstance(exc, Refused)
    return error_response(exc.status, exc.reason, exc.headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors: unknown route (404), wrong method (405), ..."""
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, str(exc.detail), dict(exc.headers or {}))


async def _invalid_request(request: Request, exc: Exception) -> Response:
    """FastAPI's parameter validation (e.g. a version that is not an integer): 422."""
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', 'invalid')}"
                         for e in exc.errors())
    return error_response(422, problems or "invalid request")


async def unexpected(request: Request, exc: Exception) -> Response:
    """A bug: logged with its traceback here, a generic 500 there."""
    return unexpected_on(request.method, request.url.path, exc)


def unexpected_on(method: str, path: str, exc: Exception) -> Response:
    """The generic 500 of a bug in answering ``method path``, its traceback logged here."""
    _log.error("unexpected error on %s %s", method, path, exc_info=exc)
    return error_response(500, "internal error")
