"""The gateway's model downloads: the newest manifest of a game and a version's ONNX bytes,
from the model store training publishes to (``[gateway] models``).

Both answer with ``ETag: "<sha256 of the model>"``; a request whose ``If-None-Match`` holds
that tag gets 304 and no body, so polling clients download a model only when it changed.
Store reads are blocking (fsspec), so these routes run in FastAPI's thread pool.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from starlette.responses import Response

from msagent.gateway.errors import Refused
from msagent.gateway.handlers import json_response
from msagent.exporting.model_store import ModelIntegrityError, ModelStore, ModelStoreError

if TYPE_CHECKING:
    from msagent.gateway.app import Gateway

_log = logging.getLogger("msagent.gateway")

_SECURED = {"security": [{"bearer": []}]}
_IMMUTABLE = "public, max-age=31536000, immutable"
"""A version's bytes never change (versions are never reused)."""


def add_model_routes(app: FastAPI, gw: Gateway) -> None:
    """``GET /v1/games/{game}/model`` and ``GET /v1/games/{game}/models/{version}``."""
    store = ModelStore(gw.cfg.path(gw.cfg.gateway.models, "models"))
    _latest_route(app, gw, store)
    _bytes_route(app, gw, store)


def _latest_route(app: FastAPI, gw: Gateway, store: ModelStore) -> None:
    """The newest manifest of a game."""

    @app.get("/v1/games/{game}/model", tags=["models"], openapi_extra=_SECURED,
             responses={304: {"description": "Unchanged (If-None-Match)"},
                        403: {"description": "The token is not valid for this game"},
                        404: {"description": "Unknown game, or no model published yet"}})
    def latest_model(game: str, request: Request) -> Response:
        """The manifest of the game's newest published model (ETag: its sha256)."""
        gw.principal(request.headers, "download", game)
        gw.schema(game)
        manifest = store.latest(game)
        if manifest is None:
            raise Refused(404, "no model published for this game yet")
        etag = f'"{manifest.sha256}"'
        headers = {"ETag": etag, "Cache-Control": "no-cache"}
        if _matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return json_response(200, manifest.model_dump(mode="json"), headers)


def _bytes_route(app: FastAPI, gw: Gateway, store: ModelStore) -> None:
    """The ONNX bytes of one version."""

    @app.get("/v1/games/{game}/models/{version}", tags=["models"], openapi_extra=_SECURED,
             response_class=Response,
             responses={200: {"content": {"application/octet-stream": {}},
                              "description": "The ONNX model"},
                        304: {"description": "Unchanged (If-None-Match)"},
                        403: {"description": "The token is not valid for this game"},
                        404: {"description": "Unknown game or version"}})
    def model_bytes(game: str, version: int, request: Request) -> Response:
        """The ONNX bytes of one published version (ETag: their sha256)."""
        gw.principal(request.headers, "download", game)
        gw.schema(game)
        try:
            manifest = store.manifest(game, version)
        except ModelStoreError:
            manifest = None
        if manifest is None:
            raise Refused(404, f"no published version {version} of this game")
        etag = f'"{manifest.sha256}"'
        headers = {"ETag": etag, "Cache-Control": _IMMUTABLE}
        if _matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        try:
            data = store.read(game, version)
        except ModelIntegrityError as exc:
            _log.error("refusing to serve a corrupt model: %s", exc)
            raise Refused(500, "the stored model is corrupt; ask the operator") from None
        return Response(data, 200, headers, media_type="application/octet-stream")


def _matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names the tag (weak or strong) or is ``*``."""
    if not if_none_match:
        return False
    tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return "*" in tags or etag in tags
