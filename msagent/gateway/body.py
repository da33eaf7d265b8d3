"""Reading an upload's body without trusting it: bounded size, bounded decompression, and
decoders that build only plain data (msgpack or JSON; nothing is ever unpickled).

Every refusal is a :class:`~msagent.gateway.errors.Refused`: 413 past ``max_body_bytes``
(a declared Content-Length before anything is read; a streamed or chunked body as soon as the
running total passes the cap; a gzip body as soon as its output does) and for a body holding
more than an upload of its game can (:class:`~msagent.experience.upload_limits.UploadLimits`:
refused while decoding, having built at most that much), 415 for an unknown Content-Type or
Content-Encoding, 400 for bytes that do not decode.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from starlette.requests import ClientDisconnect

from msagent.experience.stream_entry import UNPACK_ERRORS
from msagent.experience.upload_limits import TooLarge, UploadLimits, check_json, unpack_bounded
from msagent.gateway.errors import Refused

MSGPACK, JSON = "msgpack", "json"
CONTENT_TYPES = {"application/msgpack": MSGPACK, "application/x-msgpack": MSGPACK,
                 "application/json": JSON}
"""Content-Types an upload may have, and the decoder each selects."""


class UploadRequest(Protocol):
    """What the upload handler reads of a request: Starlette's ``Request`` is one, and so are
    the ASGI fast path's ``RawUpload`` and ``UploadProtocol``'s ``DirectUpload``."""

    @property
    def headers(self) -> Mapping[str, str]:
        """Header values by lower-case name."""

    def stream(self) -> AsyncIterator[bytes]:
        """The body's chunks as they arrive (ClientDisconnect if the client goes away)."""


def content_kind(content_type: str | None) -> str:
    """The decoder a Content-Type header selects (parameters such as charset ignored); else 415."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    kind = CONTENT_TYPES.get(media)
    if kind is None:
        raise Refused(415, f"Content-Type must be one of {sorted(CONTENT_TYPES)}")
    return kind


async def read_upload(request: UploadRequest, max_bytes: int,
                      limits: UploadLimits) -> tuple[Any, bytes | None]:
    """The decoded body of an upload request (plain maps, lists, numbers, strings, bytes),
    and its bytes when they are msgpack (they can go on the stream as they are)."""
    kind = content_kind(request.headers.get("content-type"))
    data = await read_body(request, max_bytes)
    return decode(data, kind, limits), data if kind == MSGPACK else None


async def read_body(request: UploadRequest, max_bytes: int) -> bytes:
    """The request's body, gunzipped if so encoded, refused (413) once it passes ``max_bytes``.

    At most ``max_bytes`` plus one received chunk is ever read, and at most ``max_bytes + 1``
    bytes are ever inflated, whatever the sender declares or compresses.
    """
    reader = BodyReader(request.headers, max_bytes)
    try:
        async for chunk in request.stream():
            reader.feed(chunk)
    except ClientDisconnect:
        raise Refused(400, "the client went away before sending the whole body") from None
    return reader.body()


class BodyReader:
    """One request body read chunk by chunk within the cap (see :func:`read_body`; a body
    already received whole is one chunk).

    Args:
        headers: The request's headers (Content-Encoding and Content-Length are checked here,
            before any chunk: 415, 400 or 413).
        max_bytes: The cap, on what is received and on what it inflates to.
    """

    def __init__(self, headers: Mapping[str, str], max_bytes: int) -> None:
        self._inflater = _inflater(headers.get("content-encoding"))
        _check_declared_length(headers.get("content-length"), max_bytes)
        self._max = max_bytes
        self._parts: list[bytes] = []
        self._received = self._size = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk; Refused(413) as soon as the body passes the cap."""
        self._received += len(chunk)
        if self._inflater is not None:
            chunk = _inflate(self._inflater, chunk, self._max - self._size)
        self._size += len(chunk)
        if self._received > self._max or self._size > self._max:
            raise Refused(413, f"body larger than {self._max} bytes")
        if chunk:
            self._parts.append(chunk)

    def body(self) -> bytes:
        """The whole body (Refused(400) if a gzip body ended early)."""
        if self._inflater is not None and not self._inflater.eof:
            raise Refused(400, "truncated gzip body")
        parts = self._parts
        return parts[0] if len(parts) == 1 else b"".join(parts)


def decode(data: bytes, kind: str, limits: UploadLimits) -> Any:
    """Plain data from msgpack (str keys only, no extension types) or JSON (no NaN/Infinity),
    within an upload's ``limits`` (413 past them, naming the limit)."""
    try:
        if kind == MSGPACK:
            return unpack_bounded(data, limits)
        check_json(data, limits)  # and JSON is UTF-8 (RFC 8259), never a guessed encoding
        return json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
    except TooLarge as exc:
        raise Refused(413, f"body holds more than an upload of this game can: {exc}") from None
    except UNPACK_ERRORS:
        name = "msgpack" if kind == MSGPACK else "JSON"
        raise Refused(400, f"body is not valid {name}") from None


def _refuse_constant(name: str) -> Any:
    """JSON's NaN, Infinity and -Infinity are not numbers an upload may carry."""
    raise ValueError(f"{name} is not allowed")


def _inflater(encoding: str | None) -> Any:
    """A gzip decompressor for ``Content-Encoding: gzip``, None for no encoding; else 415."""
    encoding = (encoding or "identity").strip().lower()
    if encoding == "identity":
        return None
    if encoding == "gzip":
        return zlib.decompressobj(wbits=31)
    raise Refused(415, "Content-Encoding must be gzip or none")


def _inflate(inflater: Any, chunk: bytes, room: int) -> bytes:
    """Decompress a chunk, producing at most ``room + 1`` bytes (one more than fits: 413)."""
    try:
        out = inflater.decompress(chunk, room + 1)
    except zlib.error:
        raise Refused(400, "body is not valid gzip") from None
    if inflater.unused_data:
        raise Refused(400, "data after the end of the gzip stream")
    return out


def _check_declared_length(value: str | None, max_bytes: int) -> None:
    """A declared Content-Length above the cap is refused before reading anything."""
    if value is None:
        return
    value = value.strip()
    if not (value.isascii() and value.isdigit()):
        raise Refused(400, "bad Content-Length")
    if len(value) > 18 or int(value) > max_bytes:
        raise Refused(413, f"body larger than {max_bytes} bytes")
