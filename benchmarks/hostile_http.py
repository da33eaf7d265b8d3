"""The hostile-client benchmark's strict reading of HTTP/1.1 requests from the raw bytes a
client sent (RFC 9112), for the reference check (``hostile_reference``): lenient where the RFC
lets a server choose (obs-fold unfolded, identical repeated Content-Lengths, a missing Host,
any HTTP/1.x minor version), strict where it does not (conflicting framing, malformed chunks,
NUL/CR/LF in a field, a version other than 1.x), and bounded as the gateway documents (a head
past ``max_head_bytes`` must be refused).

Hand-written because the point is a second reading of the bytes, independent of the
gateway's parser (httptools): a desync between the two is what request smuggling exploits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_HEAD_BYTES = 16 * 1024
"""The gateway's default ``max_head_bytes``: a longer request line plus headers is refused."""

TOKEN_CHARS = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""RFC 9110 ``token``: what a method or a field name is made of."""


class Invalid(Exception):
    """What is wrong with a request, in a few words."""


@dataclass
class Request:
    """One request as the reference reads it."""

    method: str
    target: str
    version: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The first header of this (lower-case) name."""
        return next((v for n, v in self.headers if n == name), None)


@dataclass
class Parsed:
    """The requests read from a connection's bytes, and why reading stopped (None: the bytes
    ended at a request's end)."""

    requests: list[Request]
    error: str | None


def parse_requests(data: bytes) -> Parsed:
    """Every request the bytes hold, read strictly; reading stops at the first malformed or
    incomplete one (nothing after it can be framed)."""
    requests, rest = [], data
    while rest:
        try:
            request, rest = _one_request(rest)
        except Invalid as exc:
            return Parsed(requests, str(exc))
        requests.append(request)
    return Parsed(requests, None)


def _one_request(data: bytes) -> tuple[Request, bytes]:
    """The first request of the bytes and the bytes after it."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        raise Invalid("incomplete head")
    if end > MAX_HEAD_BYTES:
        raise Invalid(f"head larger than {MAX_HEAD_BYTES} bytes")
    lines = data[:end].split(b"\r\n")
    request = _request_line(lines[0])
    request.headers = _headers(lines[1:])
    body, rest = _framed_body(request, data[end + 4:])
    request.body = body
    return request, rest


def _request_line(line: bytes) -> Request:
    """``METHOD SP target SP HTTP/1.x``, exactly."""
    parts = line.split(b" ")
    if len(parts) != 3 or not parts[1]:
        raise Invalid("malformed request line")
    method, target, version = (p.decode("latin-1") for p in parts)
    if not TOKEN_CHARS.fullmatch(method) or not re.fullmatch(r"HTTP/1\.[0-9]", version):
        raise Invalid("bad method or version")
    if any(not 0x21 <= b <= 0x7E for b in parts[1]):
        raise Invalid("bad byte in the target")
    return Request(method, target, version)


def _headers(lines: list[bytes]) -> list[tuple[str, str]]:
    """Header fields (lower-case names); obs-fold unfolded to a space, as RFC 9112 allows."""
    fields: list[tuple[str, str]] = []
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            if not fields:
                raise Invalid("a folded line before any field")
            name, value = fields.pop()
            fields.append((name, f"{value} {_value(line)}".strip(" \t")))
            continue
        name, colon, value = line.partition(b":")
        if not colon or not TOKEN_CHARS.fullmatch(name.decode("latin-1")):
            raise Invalid("malformed header line")
        fields.append((name.decode("latin-1").lower(), _value(value)))
    return fields


def _value(raw: bytes) -> str:
    """A field value without its surrounding whitespace; NUL, CR or LF make it invalid."""
    if any(b in raw for b in (b"\x00", b"\r", b"\n")):
        raise Invalid("NUL, CR or LF in a header value")
    return raw.decode("latin-1").strip(" \t")


def _framed_body(request: Request, data: bytes) -> tuple[bytes, bytes]:
    """The request's body (by Content-Length or chunked) and the bytes after it."""
    lengths = [v for n, v in request.headers if n == "content-length"]
    codings = [v for n, v in request.headers if n == "transfer-encoding"]
    if codings:
        if lengths or request.version == "HTTP/1.0" or len(codings) > 1 \
                or codings[0].lower() != "chunked":
            raise Invalid("Transfer-Encoding other than one 'chunked', or with Content-Length")
        return _chunked(data)
    if not lengths:
        return b"", data
    values = {v.strip(" \t") for value in lengths for v in value.split(",")}
    if len(values) != 1 or not all(re.fullmatch(r"[0-9]{1,15}", v) for v in values):
        raise Invalid("bad or conflicting Content-Length")
    size = int(values.pop())
    if len(data) < size:
        raise Invalid("body shorter than its Content-Length")
    return data[:size], data[size:]


def _chunked(data: bytes) -> tuple[bytes, bytes]:
    """A chunked body, decoded, and the bytes after its trailer section."""
    parts, at = [], 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            raise Invalid("incomplete chunk size")
        size_text, semicolon, ext = data[at:end].partition(b";")
        if semicolon:  # whitespace may precede an extension (BWS), nothing else may
            size_text = size_text.rstrip(b" \t")
        if not re.fullmatch(rb"[0-9A-Fa-f]{1,15}", size_text) or b"\x00" in ext:
            raise Invalid("bad chunk size")
        size, at = int(size_text, 16), end + 2
        if size == 0:
            return b"".join(parts), _trailers(data, at)
        if len(data) < at + size + 2:
            raise Invalid("incomplete chunk")
        if data[at + size:at + size + 2] != b"\r\n":
            raise Invalid("chunk data not followed by CRLF")
        parts.append(data[at:at + size])
        at += size + 2


def _trailers(data: bytes, at: int) -> bytes:
    """The bytes after a chunked body's trailer section."""
    end = data.find(b"\r\n\r\n", at - 2)
    if end < 0:
        raise Invalid("incomplete trailers")
    _headers([line for line in data[at:end].split(b"\r\n") if line])
    return data[end + 4:]
