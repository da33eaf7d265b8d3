"""The upload route's logic, callable two ways with the same checks in the same order (token
401/403, game 404, rate 429, Content-Type 415, body 413/400, byte rate 429, decoding 400/413,
schema 422, Redis 503):

- as a coroutine on a streamed request (:meth:`Uploads.__call__`): the FastAPI route, the ASGI
  fast path, and uploads whose body arrives in several reads;
- synchronously on a body received whole (:meth:`Uploads.now`), as ``msagent serve``'s
  :class:`~msagent.gateway.upload_protocol.UploadProtocol` does for most uploads: the answer
  is then a response at once (a refusal) or the future of the Redis group commit
  (:meth:`Uploads.answer` reads it); the coroutine answers instead when a shared rate limit
  has to ask Redis first. No task, coroutine or async generator per upload: under
  load those cost the gateway's one core about a tenth of its time.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from redis import exceptions as rex
from starlette.responses import Response

from msagent.experience.records import EpisodeRecord, Provenance, RecordError
from msagent.experience.schema import GameSchema
from msagent.experience.stream_entry import upload_entry
from msagent.gateway.body import MSGPACK, BodyReader, UploadRequest, content_kind, decode, \
    read_body
from msagent.gateway.errors import Refused, retry_after
from msagent.gateway.handlers import error_response, json_response, unexpected_on
from msagent.gateway.producer import Added
from msagent.gateway.ratelimit import RateLimiter
from msagent.gateway.tokens import Principal

if TYPE_CHECKING:
    from msagent.gateway.app import Gateway

_REDIS_ERRORS = (rex.ConnectionError, rex.TimeoutError, rex.ResponseError)


class Uploads:
    """``POST /v1/games/{game}/episodes`` of one gateway.

    Args:
        gw: The gateway (schemas, tokens, limits, producer).
    """

    def __init__(self, gw: Gateway) -> None:
        self.gw = gw

    async def __call__(self, game: str, request: UploadRequest) -> Response:
        """Upload one episode (or consecutive steps of one) of ``game``."""
        principal, schema = self._admit(game, request.headers)
        _limited(await self.gw.rate_wait(principal.client))
        kind = content_kind(request.headers.get("content-type"))
        data = await read_body(request, self.gw.max_body_bytes)
        self._charge(principal, data)
        record, entry = self._checked(game, schema, principal, kind, data)
        return added_response(await self.gw.producer.add(record, entry))

    @property
    def synchronous(self) -> bool:
        """Whether :meth:`now` can answer (not before the consumer group is known to exist:
        creating it needs the coroutine)."""
        return self.gw.producer.ready

    def now(self, game: str, headers: Mapping[str, str], body: Callable[[], bytes]
            ) -> Response | asyncio.Future[list[Any]] | None:
        """The same for a body received whole (``body`` gives it), from synchronous code in
        the event loop, when :attr:`synchronous`: a refusal, the future of the group commit
        (for :meth:`answer`), or None when the client's shared rate limit needs Redis (the
        coroutine answers then; the body is left untouched)."""
        gw = self.gw
        try:
            principal, schema = self._admit(game, headers)
            limiter = gw.limiter
            if isinstance(limiter, RateLimiter):
                _limited(limiter.take(principal.client))
            elif not limiter.take_now(principal.client):
                return None
            kind = content_kind(headers.get("content-type"))
            reader = BodyReader(headers, gw.max_body_bytes)
            reader.feed(body())
            data = reader.body()
            self._charge(principal, data)
            record, entry = self._checked(game, schema, principal, kind, data)
            return gw.producer.submit(record, entry)
        except Refused as exc:
            return error_response(exc.status, exc.reason, exc.headers)
        except Exception as exc:
            return unexpected_on("POST", f"/v1/games/{game}/episodes", exc)

    def answer(self, game: str, commit: asyncio.Future[list[Any]]) -> Response:
        """The answer to an upload of :meth:`now` once its group commit is done."""
        try:
            return added_response(self.gw.producer.added(commit.result()))
        except Refused as exc:
            return error_response(exc.status, exc.reason, exc.headers)
        except _REDIS_ERRORS as exc:
            mapped = self.gw.producer.unavailable(exc)
            if isinstance(mapped, Refused):
                return error_response(mapped.status, mapped.reason, mapped.headers)
            return unexpected_on("POST", f"/v1/games/{game}/episodes", mapped)
        except Exception as exc:
            return unexpected_on("POST", f"/v1/games/{game}/episodes", exc)

    def _admit(self, game: str, headers: Mapping[str, str]) -> tuple[Principal, GameSchema]:
        """The uploader (401/403, also for a game the token is not valid for) and the game's
        schema (404)."""
        return self.gw.principal(headers, "upload", game), self.gw.schema(game)

    def _charge(self, principal: Principal, data: bytes) -> None:
        """Spend the body's bytes from the client's byte bucket before decoding it; else 429
        with the seconds until they are there."""
        wait = self.gw.byte_limiter.take(principal.client, len(data))
        if wait:
            raise Refused(429, "upload byte rate exceeded (rate_bytes_per_s); slow down",
                          retry_after(wait))

    @staticmethod
    def _checked(game: str, schema: GameSchema, principal: Principal, kind: str,
                 data: bytes) -> tuple[EpisodeRecord, bytes]:
        """The checked record of a body (400, 413 past the game's upload limits, 422) and its
        stream entry (msgpack uploads go on the stream as sent, beside the gateway's
        provenance)."""
        body = decode(data, kind, schema.limits)
        try:
            record = schema.validate_upload(body, Provenance(principal.client, time.time()))
        except RecordError as exc:
            raise Refused(422, str(exc)) from None
        if kind == MSGPACK:
            return record, upload_entry(game, record.provenance, data)
        return record, record.to_msgpack()


def _limited(wait: float) -> None:
    """429 with the seconds to wait, if there are any."""
    if wait:
        raise Refused(429, "rate limit exceeded; slow down", retry_after(wait))


def added_response(added: Added) -> Response:
    """201 ``{"status": "stored", "entry": ...}`` or 200 ``{"status": "duplicate", ...}``,
    rendered without ``json.dumps`` (the entry is a stream id: digits and one dash)."""
    status, word = (200, b"duplicate") if added.duplicate else (201, b"stored")
    if not _STREAM_ID.fullmatch(added.entry):  # never expected; keep the JSON valid regardless
        return json_response(status, {"status": word.decode(), "entry": added.entry})
    return _JsonAnswer(b'{"status":"%s","entry":"%s"}' % (word, added.entry.encode()), status)


_STREAM_ID = re.compile(r"[0-9]+-[0-9]+")


class _JsonAnswer(Response):
    """A JSON answer with its two headers set directly: Starlette's ``__init__`` renders the
    body and builds the headers generically, a few percent of the gateway's CPU per upload."""

    media_type = "application/json"

    def __init__(self, body: bytes, status: int) -> None:  # noqa: D107 (the class says it)
        self.status_code, self.body, self.background = status, body, None
        self.raw_headers = [(b"content-length", b"%d" % len(body)),
                            (b"content-type", b"application/json")]
