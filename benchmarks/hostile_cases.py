"""The hostile-client benchmark's requests: raw bytes for one connection each, drawn by a
seeded generator, case by case (case ``i`` of seed ``s`` is always the same request, given
the same tokens: ``--replay`` sends it again).

Here: the case (:class:`Case`), the tokens by role, request builders, and the families
``schema`` (mutations of a valid episode), ``bodies`` (bytes no encoder would write) and
``encodings`` (gzip, Content-Type, the body's framing); ``heads`` is in ``hostile_heads``,
``tokens``, ``games`` and ``slow`` in ``hostile_families``.
"""

from __future__ import annotations

import functools
import gzip
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

import msgpack

from hostile_bodies import encode, episode, gzipped, mutated_body, valid_body
from hostile_reference import GAMES, TokenInfo

PATH = "/v1/games/{}/episodes"
TYPES = {"msgpack": b"application/msgpack", "json": b"application/json"}


@dataclass
class Tokens:
    """The benchmark's tokens by role (see ``hostile.make_tokens``)."""

    attack: list[str]
    pixels: str
    all_games: str
    download: str
    revoked: str
    expired: str
    admin: str
    good: str

    def infos(self) -> dict[str, TokenInfo]:
        """What each token may do, for the reference check."""
        cartpole = frozenset({"cartpole"})
        infos = {t: TokenInfo(frozenset({"upload"}), cartpole) for t in self.attack}
        infos.update({
            self.pixels: TokenInfo(frozenset({"upload"}), frozenset({"pixels"})),
            self.all_games: TokenInfo(frozenset({"upload", "download"}), None),
            self.download: TokenInfo(frozenset({"download"}), None),
            self.revoked: TokenInfo(frozenset({"upload"}), cartpole, usable=False),
            self.expired: TokenInfo(frozenset({"upload"}), cartpole, usable=False),
            self.admin: TokenInfo(frozenset({"admin"}), None),
            self.good: TokenInfo(frozenset({"upload"}), cartpole)})
        return infos


@dataclass
class Case:
    """One connection's worth of hostile bytes.

    Attributes:
        pieces: Written in order, ``pause_s`` apart (a slow client's trickle).
        expect: Answers to wait for before closing (more than the requests: read to EOF).
        wait_s: Longest wait for them after the last piece.
        read_delay_s: How long the client ignores answers first (a slow reader).
    """

    index: int
    family: str
    kind: str
    pieces: list[bytes]
    pause_s: float = 0.0
    expect: int = 1
    wait_s: float = 3.0
    read_delay_s: float = 0.0
    extra: dict = field(default_factory=dict)

    @functools.cached_property
    def data(self) -> bytes:
        """Every byte the client sends (the pieces are set once, before it is read)."""
        return b"".join(self.pieces)


class Draw:
    """What one case's generator needs: its RNG, the tokens, a unique episode id."""

    def __init__(self, seed: int, index: int, tokens: Tokens) -> None:
        self.rng = random.Random(f"{seed}:{index}")
        self.tokens, self.index, self.seed = tokens, index, seed

    def episode_id(self, suffix: str = "") -> str:
        """An id no other case uses."""
        return f"h{self.seed}-{self.index}{suffix}"

    def token(self) -> str:
        """One of the cartpole attack tokens."""
        return self.rng.choice(self.tokens.attack)

    def kind(self) -> str:
        """msgpack (mostly) or JSON."""
        return "json" if self.rng.random() < 0.3 else "msgpack"


def request(target: bytes | str, headers: list[bytes], body: bytes = b"",
            method: bytes = b"POST", version: bytes = b"HTTP/1.1", host: bool = True,
            length: bool = True) -> bytes:
    """The bytes of one request (Host and Content-Length added unless told not to)."""
    if isinstance(target, str):
        target = target.encode()
    lines = [b"%s %s %s" % (method, target, version), *([b"Host: 127.0.0.1"] if host else []),
             *headers, *([b"Content-Length: %d" % len(body)] if length else [])]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def bearer(token: str | bytes) -> bytes:
    """An Authorization header."""
    return b"Authorization: Bearer " + (token.encode() if isinstance(token, str) else token)


def upload(d: Draw, body: bytes | None = None, kind: str | None = None, game: str = "cartpole",
           token: str | bytes | None = None, extra: list[bytes] | None = None,
           target: str | bytes | None = None, **options: object) -> bytes:
    """An upload request, valid unless the arguments say otherwise."""
    kind = kind or d.kind()
    if body is None:
        body = valid_body(d.rng, game, d.episode_id(), kind)
    headers = [bearer(token if token is not None else d.token()),
               b"Content-Type: " + TYPES[kind], *(extra or [])]
    return request(target or PATH.format(game), headers, body, **options)  # type: ignore


def chunked(body: bytes, size: int) -> bytes:
    """A body in chunks of ``size`` bytes, with its last chunk."""
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
             for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


# ------------------------------------------------------------------------------ schema


def schema_case(d: Draw) -> tuple[str, list[bytes]]:
    """A mutated (sometimes untouched) episode of a game its token may upload."""
    role = d.rng.random()
    game = "pixels" if role < 0.25 else d.rng.choice(list(GAMES)) if role < 0.4 else "cartpole"
    token = d.tokens.pixels if game == "pixels" and role < 0.25 else \
        d.tokens.all_games if role < 0.4 else d.token()
    kind = d.kind()
    body, what = mutated_body(d.rng, game, d.episode_id(), kind)
    extra = []
    if d.rng.random() < 0.1:
        body, extra = gzipped(body, d.rng), [b"Content-Encoding: gzip"]
    return f"{game} {what}", [upload(d, body, kind, game, token, extra)]


# ------------------------------------------------------------------------------ bodies


def bodies_case(d: Draw) -> tuple[str, list[bytes]]:
    """Bytes no encoder of an episode would write, under a valid token and Content-Type."""
    name, make = d.rng.choice(BODY_KINDS)
    kind, body = make(d)
    return name, [upload(d, body, kind)]


def _random_bytes(d: Draw) -> tuple[str, bytes]:
    """Random bytes (sometimes none)."""
    return d.kind(), d.rng.randbytes(d.rng.choice([0, 1, 7, 100, 2000]))


def _truncated(d: Draw) -> tuple[str, bytes]:
    """A valid body cut short."""
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    return kind, body[:d.rng.randrange(len(body))]


def _deep(d: Draw) -> tuple[str, bytes]:
    """Lists nested thousands deep (in a field, or the whole body)."""
    depth = d.rng.choice([200, 2_000, 100_000])
    if d.rng.random() < 0.5:
        return "json", b"[" * depth + b"]" * depth
    nested = b"\x91" * depth + b"\xc0"
    return "msgpack", b"\x81\xa7rewards" + nested if d.rng.random() < 0.5 else nested


def _flood(d: Draw) -> tuple[str, bytes]:
    """A list of up to 4 Mi empty maps or lists (a few bytes that decode to much memory)."""
    count = int(2 ** d.rng.uniform(10, 22)) - 8
    item = d.rng.choice([b"\x80", b"\x90"])
    flood = b"\xdd" + struct.pack(">I", count) + item * count
    if d.rng.random() < 0.5:
        return "msgpack", flood
    return "msgpack", b"\x81\xacobservations" + flood


def _json_flood(d: Draw) -> tuple[str, bytes]:
    """A JSON list of up to 1 Mi empty objects or lists, or an object of 100k keys."""
    count = int(2 ** d.rng.uniform(8, 20))
    if d.rng.random() < 0.3:
        return "json", b"{" + b",".join(b'"k%d":0' % i for i in range(count // 10)) + b"}"
    return "json", b'{"observations":[' + b",".join([d.rng.choice([b"{}", b"[]"])] * count) \
        + b"]}"


def _huge_headers(d: Draw) -> tuple[str, bytes]:
    """msgpack containers and strings declaring billions of items that are not there."""
    return "msgpack", d.rng.choice([
        b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff",
        b"\xc6\xff\xff\xff\xff", b"\x81\xa7rewards\xc6\x7f\xff\xff\xff\x00",
        b"\xdf\x00\x00\x00\x02\xa1a\xc0"])


def _declared_shape(d: Draw) -> tuple[str, bytes]:
    """An episode whose arrays declare huge or empty shapes over a few bytes."""
    body = episode(d.rng, GAMES["cartpole"], d.episode_id(), lists=False)
    name = d.rng.choice(["rewards", "observations", "actions"])
    body[name]["shape"] = d.rng.choice([[2**40], [0, 2**62], [2**62, 0], [2**31, 2**31],
                                        [2**63 - 1], [0], [1, 1, 1, 1, 1, 1, 1, 1, 1]])
    return "msgpack", encode(body, "msgpack")


def _literals(d: Draw) -> tuple[str, bytes]:
    """JSON NaN, infinities, 1e999, or integers of thousands of digits in a valid episode."""
    body = encode(episode(d.rng, GAMES["cartpole"], d.episode_id(), lists=True), "json")
    literal = d.rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400",
                            b"1" * 5000, b"1" * 400, b"18446744073709551616", b"-0", b"1E2"])
    field_name = d.rng.choice([b'"rewards": [', b'"observations": [[', b'"actions": [',
                               b'"log_probs": [', b'"part": ', b'"model_version": '])
    at = body.find(field_name)
    if at < 0:
        return "json", body
    at += len(field_name)
    end = min(i for i in (body.find(b",", at), body.find(b"]", at), body.find(b"}", at))
              if i >= 0)
    return "json", body[:at] + literal + body[end:]


def _top_level(d: Draw) -> tuple[str, bytes]:
    """A body that is not a map."""
    kind = d.kind()
    return kind, encode(d.rng.choice([[], "episode", 1, None, True, [{}], 2**64 - 1]), kind)


def _newline_id(d: Draw) -> tuple[str, bytes]:
    """A valid episode whose id ends with a newline (a ``$`` regex lets it through)."""
    kind = d.kind()
    body = episode(d.rng, GAMES["cartpole"], d.episode_id() + "\n", lists=kind == "json")
    return kind, encode(body, kind)


def _ext_types(d: Draw) -> tuple[str, bytes]:
    """msgpack extension types (a timestamp, an ExtType) inside a valid episode."""
    body = episode(d.rng, GAMES["cartpole"], d.episode_id(), lists=False)
    body[d.rng.choice(["model_version", "part", "client_version", "terminated"])] = \
        d.rng.choice([msgpack.ExtType(1, b"x"), msgpack.Timestamp(1, 0),
                      msgpack.ExtType(127, b"\x00" * 4)])
    return "msgpack", msgpack.packb(body, use_bin_type=True)


BODY_KINDS: list[tuple[str, Callable[[Draw], tuple[str, bytes]]]] = [
    ("random bytes", _random_bytes), ("truncated", _truncated), ("deep nesting", _deep),
    ("flood of empty containers", _flood), ("JSON flood", _json_flood),
    ("huge container headers", _huge_headers), ("huge declared shapes", _declared_shape),
    ("JSON literals and big ints", _literals), ("not a map", _top_level),
    ("id with a trailing newline", _newline_id), ("msgpack extension types", _ext_types)]


# ------------------------------------------------------------------------------ encodings


@functools.cache
def bomb(inflated_mib: int) -> bytes:
    """Gzip of zeros (cached: compressing costs the client, not the gateway)."""
    return gzip.compress(b"\x00" * (inflated_mib << 20), compresslevel=9, mtime=0)


def encodings_case(d: Draw) -> tuple[str, list[bytes]]:
    """gzip and its bombs, Content-Type and Content-Encoding variants, body framing."""
    name, make = d.rng.choice(ENCODING_KINDS)
    return name, make(d)


def _gzip_variants(d: Draw) -> list[bytes]:
    """A gzipped valid episode, whole or broken, or a bomb."""
    kind = d.kind()
    body = gzipped(valid_body(d.rng, "cartpole", d.episode_id(), kind), d.rng)
    body = d.rng.choice([
        body, body[:-4], body[:len(body) // 2], body + b"garbage", bomb(5), bomb(64),
        body[:10] + b"\x00" * 8 + body[18:], gzipped(body, d.rng),
        gzipped(body[:0], d.rng), _two_members(d, kind)])
    return [upload(d, body, kind, extra=[b"Content-Encoding: gzip"])]


def _two_members(d: Draw, kind: str) -> bytes:
    """A valid episode gzipped as two members (valid gzip, RFC 1952)."""
    raw = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    return gzipped(raw[:len(raw) // 2], d.rng) + gzipped(raw[len(raw) // 2:], d.rng)


def _content_encoding(d: Draw) -> list[bytes]:
    """A Content-Encoding the gateway may or may not take, over a matching or plain body."""
    kind = d.kind()
    raw = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    coding = d.rng.choice([b"deflate", b"br", b"gzip, identity", b"GZIP", b"x-gzip",
                           b"identity", b"gzip", b"", b"compress", b" gzip "])
    body = gzipped(raw, d.rng) if b"gzip" in coding.lower() and d.rng.random() < 0.7 else raw
    return [upload(d, body, kind, extra=[b"Content-Encoding: " + coding])]


def _content_type(d: Draw) -> list[bytes]:
    """Content-Types near, equal or far from the body's."""
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    value = d.rng.choice([
        b"application/msgpack", b"application/x-msgpack", b"APPLICATION/MSGPACK",
        b"application/msgpack; charset=binary", b"application/json", b"application/json;",
        b"text/plain", b"", b"multipart/form-data; boundary=x", b"application/jsonx",
        b"application/json, application/msgpack", b"application/json; charset=utf-16"])
    headers = [bearer(d.token()), b"Content-Type: " + value]
    if d.rng.random() < 0.2:
        headers.append(b"Content-Type: " + TYPES[kind])  # the first of repeated ones counts
    if d.rng.random() < 0.1:
        headers = headers[:1]
    return [request(PATH.format("cartpole"), headers, body)]


def _json_charsets(d: Draw) -> list[bytes]:
    """A valid JSON episode in UTF-16, UTF-32, or with a BOM."""
    body = valid_body(d.rng, "cartpole", d.episode_id(), "json").decode()
    data = d.rng.choice([body.encode("utf-16"), body.encode("utf-16-le"),
                         body.encode("utf-32"), body.encode("utf-8-sig")])
    return [upload(d, data, "json")]


def _length_mismatch(d: Draw) -> list[bytes]:
    """A declared length shorter or longer than the body, zero, or above the cap."""
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    declared = d.rng.choice([len(body) - d.rng.randint(1, 9), len(body) + d.rng.randint(1, 9),
                             0, 5 << 20, 4 << 20])
    headers = [bearer(d.token()), b"Content-Type: " + TYPES[kind],
               b"Content-Length: %d" % declared]
    return [request(PATH.format("cartpole"), headers, body, length=False)]


def _chunked_bodies(d: Draw) -> list[bytes]:
    """A valid episode chunked: one chunk, many tiny ones, extensions, trailers."""
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    framed = chunked(body, d.rng.choice([len(body), 1024, 64, 7]))
    if d.rng.random() < 0.3:
        framed = framed.replace(b"\r\n", b";ext=1\r\n", 1)
    if d.rng.random() < 0.3:
        framed = framed[:-2] + b"X-Trailer: 1\r\n\r\n"
    headers = [bearer(d.token()), b"Content-Type: " + TYPES[kind], b"Transfer-Encoding: chunked"]
    return [request(PATH.format("cartpole"), headers, framed, length=False)]


def _oversized(d: Draw) -> list[bytes]:
    """A real body past the 4 MiB cap, plain or chunked."""
    body = b"\x00" * ((4 << 20) + d.rng.choice([1, 4096, 1 << 20]))
    if d.rng.random() < 0.5:
        return [upload(d, body, "msgpack")]
    headers = [bearer(d.token()), b"Content-Type: application/msgpack",
               b"Transfer-Encoding: chunked"]
    return [request(PATH.format("cartpole"), headers, chunked(body, 65536), length=False)]


ENCODING_KINDS: list[tuple[str, Callable[[Draw], list[bytes]]]] = [
    ("gzip", _gzip_variants), ("gzip", _gzip_variants), ("gzip", _gzip_variants),
    ("Content-Encoding", _content_encoding), ("Content-Encoding", _content_encoding),
    ("Content-Type", _content_type), ("Content-Type", _content_type),
    ("JSON charsets", _json_charsets), ("declared length mismatch", _length_mismatch),
    ("declared length mismatch", _length_mismatch), ("chunked", _chunked_bodies),
    ("chunked", _chunked_bodies), ("oversized body", _oversized)]
