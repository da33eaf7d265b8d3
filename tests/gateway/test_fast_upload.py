"""The upload fast path (a pure ASGI middleware ahead of FastAPI): it answers exactly the
uploads, passes everything else on, and answers refusals and bugs as the routes do."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from msagent.gateway.errors import Refused
from msagent.gateway.body import UploadRequest
from msagent.gateway.fast_upload import RawUpload, UploadFastPath
from tests.gateway.conftest import Api, episode


class Downstream:
    """Stands for the FastAPI app: records what reached it and answers 299."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        """Record the request and answer it."""
        self.seen.append((scope["method"], scope["path"]))
        await Response(b"downstream", 299)(scope, receive, send)


def _call(app: Any, method: str, path: str, content: bytes = b"") -> httpx.Response:
    """One request to an ASGI app, in-process."""
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
            return await client.request(method, path, content=content)
    return asyncio.run(go())


def test_only_uploads_reach_the_handler_and_the_rest_goes_downstream() -> None:
    calls: list[tuple[str, bytes]] = []

    async def handler(game: str, request: UploadRequest) -> Response:
        assert request.headers["content-length"] == "3"
        calls.append((game, b"".join([chunk async for chunk in request.stream()])))
        return Response(b"handled", 201)

    downstream = Downstream()
    app = UploadFastPath(downstream, handler)
    assert _call(app, "POST", "/v1/games/pong-2/episodes", b"abc").status_code == 201
    assert calls == [("pong-2", b"abc")]
    for method, path in [("GET", "/v1/games/pong/episodes"), ("POST", "/v1/games/a/b/episodes"),
                         ("POST", "/v1/games//episodes"), ("POST", "/v1/games/pong/episodes/x"),
                         ("POST", "/v1/games/pong/model")]:
        assert _call(app, method, path).status_code == 299, (method, path)
    assert len(downstream.seen) == 5 and len(calls) == 1


@pytest.mark.parametrize("error, status, reason", [
    (Refused(429, "slow down", {"Retry-After": "2"}), 429, "slow down"),
    (RuntimeError("secret detail in a traceback"), 500, "internal error"),
])
def test_refusals_and_bugs_are_answered_in_the_one_error_shape(error: Exception, status: int,
                                                               reason: str) -> None:
    async def handler(game: str, request: Request) -> Response:
        raise error

    response = _call(UploadFastPath(Downstream(), handler), "POST", "/v1/games/g/episodes")
    assert response.status_code == status and response.json() == {"error": reason}
    assert "Traceback" not in response.text and "secret" not in response.text
    if status == 429:
        assert response.headers["retry-after"] == "2"


def test_the_gateway_answers_uploads_before_fastapi_routes_them(api: Api, tokens: dict,
                                                                monkeypatch) -> None:
    import fastapi.routing

    def no_routing(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an upload went through FastAPI's request handling")

    monkeypatch.setattr(fastapi.routing, "solve_dependencies", no_routing)
    assert api.upload(tokens["alice"], episode(20)).status_code == 201
    assert api.request("GET", "/v1/games", headers={
        "Authorization": f"Bearer {tokens['alice']}"}).status_code == 500  # the patch bites there


def test_a_raw_upload_gives_the_first_of_repeated_headers_and_the_chunks_in_order() -> None:
    messages = [{"type": "http.request", "body": b"ab", "more_body": True},
                {"type": "http.request", "body": b"", "more_body": True},
                {"type": "http.request", "body": b"c", "more_body": False}]

    async def receive() -> dict:
        return messages.pop(0)

    async def read() -> list[bytes]:
        return [chunk async for chunk in raw.stream()]

    scope = {"headers": [(b"content-type", b"application/json"), (b"x-a", b"1"),
                         (b"content-type", b"text/plain")]}
    raw = RawUpload(scope, receive)
    assert raw.headers == {"content-type": "application/json", "x-a": "1"}
    assert raw.headers["content-type"] == Request({"type": "http", **scope}).headers["content-type"]
    assert asyncio.run(read()) == [b"ab", b"c"]


def test_a_raw_upload_whose_client_went_away_raises_client_disconnect() -> None:
    async def receive() -> dict:
        return {"type": "http.disconnect"}

    async def read() -> list[bytes]:
        return [chunk async for chunk in RawUpload({"headers": []}, receive).stream()]

    with pytest.raises(ClientDisconnect):
        asyncio.run(read())
