"""The hostile-client benchmark's ``heads`` family: request heads that are malformed,
oversized, ambiguous about their framing, or merely unusual (a valid upload inside whenever
there is room for one, so that what the gateway makes of the head decides the answer)."""

from __future__ import annotations

from collections.abc import Callable

from hostile_bodies import mutated_body, valid_body
from hostile_cases import PATH, TYPES, Draw, bearer, chunked, request, upload

CARTPOLE = PATH.format("cartpole")


# ------------------------------------------------------------------------------ heads


def heads_case(d: Draw) -> tuple[str, list[bytes]]:
    """Malformed, oversized or unusual request heads (a valid upload inside, when there is
    room for one)."""
    name, make = d.rng.choice(HEAD_KINDS)
    return name, make(d)


def _big_header(d: Draw) -> list[bytes]:
    """One header value from 8 KB to 1 MB, in one read or in 1 KB pieces."""
    size = d.rng.choice([8_000, 15_000, 17_000, 64_000, 1_000_000])
    data = upload(d, extra=[b"X-Big: " + b"a" * size])
    return [data] if d.rng.random() < 0.5 or size > 100_000 else \
        [data[i:i + 1024] for i in range(0, len(data), 1024)]


def _many_headers(d: Draw) -> list[bytes]:
    """Hundreds or thousands of small headers."""
    count = d.rng.choice([100, 500, 3000])
    return [upload(d, extra=[b"X-H%d: v" % i for i in range(count)])]


def _long_url(d: Draw) -> list[bytes]:
    """A query string from 2 KB to 100 KB."""
    size = d.rng.choice([2_000, 15_000, 20_000, 100_000])
    return [upload(d, target=CARTPOLE + "?q=" + "x" * size)]


def _bad_bytes(d: Draw) -> list[bytes]:
    """A bad byte in a header's name or value."""
    bad = d.rng.choice([b" ", b"\x00", b"\xe9", b"(", b"\x7f", b"\t", b"\x1b", b"\x0b", b"\r",
                        b"\xff", b"\x01"])
    line = b"X" + bad + b"Foo: 1" if d.rng.random() < 0.5 else b"X-Foo: a" + bad + b"b"
    return [upload(d, extra=[line])]


def _missing_host(d: Draw) -> list[bytes]:
    """No Host header (a valid upload otherwise)."""
    return [upload(d, host=False)]


def _framing_headers(d: Draw) -> list[bytes]:
    """Duplicate or conflicting Content-Length and Transfer-Encoding."""
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    n = len(body)
    variant = d.rng.randrange(12)
    framing = [
        [b"Content-Length: %d" % n] * 2,
        [b"Content-Length: %d" % n, b"Content-Length: %d" % (n + 1)],
        [b"Content-Length: %d, %d" % (n, n)],
        [b"Content-Length: %d" % n, b"Transfer-Encoding: chunked"],
        [b"Transfer-Encoding: chunked"] * 2, [b"Transfer-Encoding: chunked, chunked"],
        [b"Transfer-Encoding: xchunked"], [b"Transfer-Encoding: gzip, chunked"],
        [b"Transfer-Encoding: Chunked"], [b"Transfer-Encoding : chunked"],
        [b"Content-Length : %d" % n], [b"Transfer-Encoding:\r\n chunked"]][variant]
    payload = chunked(body, 512) if any(b"chunked" in f.lower() for f in framing) and \
        variant != 1 else body
    headers = [bearer(d.token()), b"Content-Type: " + TYPES[kind], *framing]
    return [request(CARTPOLE, headers, payload, length=False,
                    version=b"HTTP/1.0" if d.rng.random() < 0.1 else b"HTTP/1.1")]


def _bad_chunks(d: Draw) -> list[bytes]:
    """A chunked valid episode whose framing is corrupted."""
    kind = d.kind()
    framed = chunked(valid_body(d.rng, "cartpole", d.episode_id(), kind), 256)
    first = framed.index(b"\r\n")
    bad = d.rng.choice([b"zz", b"-1", b"0x100", b"1" * 20, b"100 ", b"+100", b" 100",
                        b"100\x00", b"ffffffffffffffff", b"100;", b"FFFFFFFFFFFFFFFFF"])
    framed = d.rng.choice([bad + framed[first:], framed[:-2], framed.replace(b"\r\n", b"\n"),
                           framed[:first + 2 + 256] + framed[first + 4 + 256:]])
    headers = [bearer(d.token()), b"Content-Type: " + TYPES[kind], b"Transfer-Encoding: chunked"]
    return [request(CARTPOLE, headers, framed, length=False)]


def _bad_length(d: Draw) -> list[bytes]:
    """Content-Length negative, not a number, huge, padded or empty."""
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    value = d.rng.choice([b"-1", b"abc", b"1e3", b"+%d" % len(body), b" %d" % len(body),
                          b"%d " % len(body), b"0x10", b"18446744073709551616", b"9" * 20,
                          b"", b"%d\x00" % len(body), b"%d.0" % len(body)])
    headers = [bearer(d.token()), b"Content-Type: " + TYPES[kind], b"Content-Length: " + value]
    return [request(CARTPOLE, headers, body, length=False)]


def _obs_fold(d: Draw) -> list[bytes]:
    """A header continued on the next line (obs-fold)."""
    token = d.token()
    line = d.rng.choice([b"X-Foo: a\r\n b", b"Authorization: Bearer\r\n " + token.encode(),
                         b"Content-Type: application/\r\n msgpack", b"X-Foo: a\r\n\tb"])
    data = upload(d, kind="msgpack", token=token, extra=[line])
    if b"Authorization: Bearer\r\n" in line:  # that header only
        data = data.replace(bearer(token) + b"\r\n", b"", 1)
    return [data]


def _nul_in_line(d: Draw) -> list[bytes]:
    """A NUL in the request line."""
    data = upload(d)
    at = d.rng.choice([1, 6, data.index(b" HTTP/") + 3, data.index(b"\r\n") - 1])
    return [data[:at] + b"\x00" + data[at:]]


def _not_http(d: Draw) -> list[bytes]:
    """HTTP/0.9, the HTTP/2 preface, a TLS ClientHello, an SSH banner, noise, nothing."""
    return [d.rng.choice([
        b"GET /\r\n", b"GET /healthz\r\n\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + d.rng.randbytes(160),
        b"SSH-2.0-OpenSSH_9.6\r\n", d.rng.randbytes(d.rng.choice([1, 64, 2000])), b"",
        b"\r\n\r\n", b"POST", b"\x00" * 100])]


def _methods(d: Draw) -> list[bytes]:
    """Other methods on the upload route and other routes, with any token."""
    method = d.rng.choice([b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT",
                           b"HEAD", b"GET", b"FOO", b"post", b"A" * 100, b"POST"])
    target = d.rng.choice([CARTPOLE, "/healthz", "/v1/games", "/openapi.json", "/docs",
                           "/v1/admin/stats", "/v1/games/cartpole/model",
                           "/v1/games/cartpole/models/1", "/v1/games/cartpole/models/-1",
                           "/v1/games/pixels/models/99999999999999999999", "/", "/metrics"])
    token = d.rng.choice([d.token(), d.tokens.download, d.tokens.admin, d.tokens.all_games])
    return [request(target, [bearer(token)], b"" if d.rng.random() < 0.7 else b"{}",
                    method=method)]


def _targets(d: Draw) -> list[bytes]:
    """Absolute-form, asterisk, authority-form and odd origin-form targets."""
    target = d.rng.choice([
        b"*", b"http://127.0.0.1" + CARTPOLE.encode(), b"https://evil.example" + CARTPOLE.encode(),
        b"/" + CARTPOLE.encode(), CARTPOLE[1:].encode(), b"127.0.0.1:80",
        CARTPOLE.encode() + b"#frag", b"/v1/games/cart pole/episodes", CARTPOLE.encode() + b"?",
        CARTPOLE.encode() + b"?a=1&a=2"])
    return [upload(d, target=target)]


def _versions(d: Draw) -> list[bytes]:
    """HTTP versions other than 1.1."""
    version = d.rng.choice([b"HTTP/1.0", b"HTTP/1.2", b"HTTP/2.0", b"HTTP/1.1x", b"http/1.1",
                            b"HTTP/1", b"HTTP/9.9", b"", b"HTTP/01.1"])
    data = upload(d, version=version)
    return [data.replace(b" \r\n", b"\r\n", 1) if not version else data]


def _pipelined(d: Draw) -> list[bytes]:
    """Two requests in one write: uploads (valid or not) and garbage."""
    first = upload(d)
    body, _ = mutated_body(d.rng, "cartpole", d.episode_id("b"), "msgpack")
    second = d.rng.choice([upload(d, body, "msgpack"), b"GARBAGE\r\n\r\n",
                           request("/healthz", [], method=b"GET")])
    return [first + second] if d.rng.random() < 0.5 else [second + first]


def _smuggle(d: Draw) -> list[bytes]:
    """CL.TE and TE.CL desync attempts hiding a second upload (of an invalid episode)."""
    body, _ = mutated_body(d.rng, "cartpole", d.episode_id("s"), "msgpack")
    hidden = upload(d, body, "msgpack")
    headers = [bearer(d.token()), b"Content-Type: application/msgpack"]
    if d.rng.random() < 0.5:  # CL.TE: a chunked-reader sees an empty body, then the upload
        framed = b"0\r\n\r\n" + hidden
        headers += [b"Content-Length: %d" % len(framed), b"Transfer-Encoding: chunked"]
    else:  # TE.CL: a length-reader takes the chunk size line as the body
        framed = b"%x\r\n%s\r\n0\r\n\r\n" % (len(hidden), hidden)
        headers += [b"Transfer-Encoding: chunked", b"Content-Length: 4"]
    return [request(CARTPOLE, headers, framed, length=False)]


def _upgrades(d: Draw) -> list[bytes]:
    """Upgrade to WebSocket or h2c, or an Expect header."""
    extra = d.rng.choice([
        [b"Connection: Upgrade", b"Upgrade: websocket", b"Sec-WebSocket-Version: 13",
         b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="],
        [b"Connection: Upgrade, HTTP2-Settings", b"Upgrade: h2c", b"HTTP2-Settings: AAMAAABk"],
        [b"Expect: 100-continue"], [b"Expect: 200-ok"], [b"Connection: close"],
        [b"Connection: keep-alive, close"]])
    return [upload(d, extra=extra)]


HEAD_KINDS: list[tuple[str, Callable[[Draw], list[bytes]]]] = [
    ("big header", _big_header), ("many headers", _many_headers), ("long URL", _long_url),
    ("bad bytes in a header", _bad_bytes), ("missing Host", _missing_host),
    ("CL/TE conflicts", _framing_headers), ("CL/TE conflicts", _framing_headers),
    ("bad chunk sizes", _bad_chunks), ("bad Content-Length", _bad_length),
    ("obs-fold", _obs_fold), ("NUL in the request line", _nul_in_line),
    ("not HTTP/1", _not_http), ("odd methods", _methods), ("odd targets", _targets),
    ("HTTP versions", _versions), ("pipelined", _pipelined), ("smuggling", _smuggle),
    ("upgrades and Expect", _upgrades)]
