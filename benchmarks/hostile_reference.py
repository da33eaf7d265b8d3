"""The hostile-client benchmark's independent check of what the gateway may accept: a strict
reading of the raw bytes a client sent (HTTP/1.1 framing, the upload route, the token, the
Content-Type and Content-Encoding, the body) against the documented upload schema.

Written from the documentation (the ``[gateway]`` config, the upload route's OpenAPI entry,
``msagent/experience/schema.py``'s docstrings), deliberately without importing anything of
``msagent``: a check that shared the gateway's code would share its bugs. Plain Python,
numpy (float32 rounding only) and msgpack's decoder (a decoder, not a validator).

HTTP is read by ``hostile_http``. Paths are percent-decoded before routing, as ASGI servers
do; the first of repeated headers counts.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
import urllib.parse
import zlib
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np

from hostile_http import Invalid, Request

MAX_BODY_BYTES = 4 * 1024 * 1024
"""The gateway's default ``max_body_bytes``: the cap on the body, received and inflated."""

EPISODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
"""The documented episode id (used with ``fullmatch``: a trailing newline is not allowed)."""

REQUIRED = {"episode_id", "observations", "actions", "rewards", "terminated", "truncated"}
OPTIONAL = {"part", "client_version", "model_version", "log_probs"}
LOGP_SLACK = 1e-4
WIRE_DTYPES = {"<f4": np.float32, "<f8": np.float64, "<i8": np.int64, "<i4": np.int32,
               "|u1": np.uint8, "|b1": np.bool_}
"""Array dtypes the msgpack form may declare (``dtype``/``shape``/``data`` maps)."""

MAX_CONTAINERS = 4096
"""More lists and maps (or ``[``/``{`` characters) than a valid upload of these games holds:
1 map, 4 arrays, at most 64 x 9 lists of pixels or 500 of CartPole observations, and a
64-character ``client_version`` that may hold brackets."""

NOT_PRINTABLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
"""Unicode categories of characters that are not printable (ASCII space excepted)."""


@dataclass(frozen=True)
class Game:
    """One game's upload schema, as the benchmark's config declares it."""

    name: str
    obs_shape: tuple[int, ...]
    obs_dtype: str
    action_n: int
    max_steps: int


GAMES = {"cartpole": Game("cartpole", (4,), "float32", 2, 500),
         "pixels": Game("pixels", (8, 8), "uint8", 4, 64)}


@dataclass(frozen=True)
class TokenInfo:
    """What a token may do: its scopes, its games (None: all) and whether it is usable."""

    scopes: frozenset[str]
    games: frozenset[str] | None
    usable: bool = True


# ------------------------------------------------------------------------------ the upload


def upload_game(request: Request) -> str | None:
    """The game of an upload request (POST to ``/v1/games/{game}/episodes``; the path
    percent-decoded), else None: not an upload."""
    if request.method != "POST":
        return None
    target = request.target
    if "://" in target:
        target = urllib.parse.urlsplit(target).path or "/"
    elif not target.startswith("/"):
        return None
    path = urllib.parse.unquote(target.split("?", 1)[0].split("#", 1)[0])
    found = re.fullmatch(r"/v1/games/([^/]+)/episodes", path)
    return None if found is None else found[1]


def upload_problem(request: Request, tokens: dict[str, TokenInfo],
                   max_bytes: int = MAX_BODY_BYTES) -> str | None:
    """Why the gateway must refuse this upload request (None: it may store it)."""
    try:
        game = GAMES.get(upload_game(request) or "")
        if game is None:
            raise Invalid("not an upload of a configured game")
        _check_token(request.header("authorization"), tokens, game.name)
        kind = _content_kind(request.header("content-type"))
        data = _inflated(request.body, request.header("content-encoding"), max_bytes)
        check_episode(_decoded(data, kind), game)
    except Invalid as exc:
        return str(exc)
    return None


def _check_token(value: str | None, tokens: dict[str, TokenInfo], game: str) -> None:
    """A bearer token with the upload scope, usable, valid for the game."""
    scheme, _, token = (value or "").partition(" ")
    info = tokens.get(token.strip(" ")) if scheme.lower() == "bearer" else None
    if info is None or not info.usable or "upload" not in info.scopes:
        raise Invalid("no usable upload token")
    if info.games is not None and game not in info.games:
        raise Invalid("token not valid for this game")


def _content_kind(value: str | None) -> str:
    """``msgpack`` or ``json`` by the media type (parameters ignored)."""
    media = (value or "").split(";", 1)[0].strip(" \t").lower()
    kinds = {"application/msgpack": "msgpack", "application/x-msgpack": "msgpack",
             "application/json": "json"}
    if media not in kinds:
        raise Invalid("unsupported Content-Type")
    return kinds[media]


def _inflated(body: bytes, encoding: str | None, max_bytes: int) -> bytes:
    """The body, gunzipped when ``gzip`` (every member of a multi-member file, RFC 1952),
    within the cap."""
    if len(body) > max_bytes:
        raise Invalid("body above the cap")
    coding = (encoding or "identity").strip(" \t").lower()
    if coding == "identity":
        return body
    if coding != "gzip":
        raise Invalid("unsupported Content-Encoding")
    out, rest = b"", body
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        try:
            out += inflater.decompress(rest, max_bytes + 1 - len(out))
        except zlib.error:
            raise Invalid("not gzip") from None
        if len(out) > max_bytes:
            raise Invalid("inflated body above the cap")
        if not inflater.eof:
            raise Invalid("truncated gzip")
        rest = inflater.unused_data
    return out


def _decoded(data: bytes, kind: str) -> Any:
    """Plain data from msgpack or from JSON (RFC 8259: UTF-8, no NaN or Infinity).

    No valid upload of the benchmark's games holds a list longer than the most steps, a map
    of more than its fields, or more than ``MAX_CONTAINERS`` lists and maps: a body past that
    is refused before it is decoded (a flood of empty maps costs the check nothing)."""
    longest = max(g.max_steps for g in GAMES.values())
    try:
        if kind == "msgpack":
            return msgpack.unpackb(data, raw=False, strict_map_key=False,
                                   max_array_len=longest, max_map_len=len(REQUIRED | OPTIONAL))
        if data.count(b"[") + data.count(b"{") > MAX_CONTAINERS:
            raise ValueError("more lists and maps than any valid upload")
        text = data.decode("utf-8").removeprefix("\ufeff")
        return json.loads(text, parse_constant=_no_constant)
    except Exception as exc:  # any decoder failure means the body is not that format
        raise Invalid(f"body is not {kind}: {type(exc).__name__}") from None


def _no_constant(name: str) -> Any:
    """JSON has no NaN or Infinity."""
    raise ValueError(name)


# ------------------------------------------------------------------------------ the schema


def check_episode(body: Any, game: Game) -> None:
    """Invalid unless the decoded body is an episode of the game, field by field."""
    if type(body) is not dict or not all(type(k) is str for k in body):
        raise Invalid("not a map with string keys")
    if set(body) - REQUIRED - OPTIONAL or REQUIRED - set(body):
        raise Invalid("unknown or missing fields")
    if type(body["episode_id"]) is not str or not EPISODE_ID.fullmatch(body["episode_id"]):
        raise Invalid("bad episode_id")
    rewards = _floats(body["rewards"], "rewards", None, game.max_steps)
    steps = len(rewards)
    if game.obs_dtype == "uint8":
        _ints(body["observations"], "observations", (steps, *game.obs_shape), 256)
    else:
        _floats(body["observations"], "observations", (steps, *game.obs_shape))
    _ints(body["actions"], "actions", (steps,), game.action_n)
    if body.get("log_probs") is not None:
        if (_floats(body["log_probs"], "log_probs", (steps,)) > LOGP_SLACK).any():
            raise Invalid("log_probs above 0")
    _check_scalars(body)


def _check_scalars(body: dict) -> None:
    """The flags, the part, the versions."""
    if type(body["terminated"]) is not bool or type(body["truncated"]) is not bool:
        raise Invalid("terminated/truncated not booleans")
    if not _int_between(body.get("part", 0), 0, 1_000_000):
        raise Invalid("bad part")
    version = body.get("model_version")
    if version is not None and not _int_between(version, 0, 2**62):
        raise Invalid("bad model_version")
    text = body.get("client_version", "")
    if type(text) is not str or len(text) > 64 or not _printable(text):
        raise Invalid("bad client_version")


def _int_between(value: Any, low: int, high: int) -> bool:
    """An int (not a bool) in ``low..high``."""
    return type(value) is int and low <= value <= high


def _printable(text: str) -> bool:
    """No 'Other' or 'Separator' characters but the ASCII space."""
    return all(c == " " or unicodedata.category(c) not in NOT_PRINTABLE for c in text)


def _floats(value: Any, name: str, shape: tuple[int, ...] | None,
            max_steps: int = 0) -> np.ndarray:
    """A float field as finite float32 values of the shape (None: 1-d, 1..max_steps long)."""
    array = _numbers(value, name, shape, max_steps, integers=False)
    with np.errstate(over="ignore", invalid="ignore"):
        as32 = array.astype(np.float32)
    if not np.isfinite(as32).all():
        raise Invalid(f"{name}: not finite in float32")
    return as32


def _ints(value: Any, name: str, shape: tuple[int, ...], bound: int) -> None:
    """An integer field of the shape with values in ``0..bound-1``."""
    array = _numbers(value, name, shape, 0, integers=True)
    if array.size and (array.min() < 0 or array.max() >= bound):
        raise Invalid(f"{name}: outside 0..{bound - 1}")


def _numbers(value: Any, name: str, shape: tuple[int, ...] | None, max_steps: int,
             integers: bool) -> np.ndarray:
    """The field's values: a dtype/shape/data map or nested lists of numbers."""
    if shape is None:
        size = _declared_length(value)
        if not 1 <= size <= max_steps:
            raise Invalid(f"{name}: length not in 1..{max_steps}")
        shape = (size,)
    if type(value) is dict:
        return _wire(value, name, shape, integers)
    if type(value) is not list:
        raise Invalid(f"{name}: not an array")
    leaves = _leaves(value, shape, name)
    if integers:
        if not all(type(x) is int for x in leaves):
            raise Invalid(f"{name}: not integers")
        return np.array([min(max(x, -1), 2**40) for x in leaves], np.int64)
    if not all(type(x) in (int, float) for x in leaves):
        raise Invalid(f"{name}: not numbers")
    return np.array([_as_float(x) for x in leaves], np.float64)


def _as_float(x: int | float) -> float:
    """A number as a float (an int too large for one is infinite)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf


def _declared_length(value: Any) -> int:
    """How many steps a 1-d field holds, before looking at its values."""
    if type(value) is list:
        return len(value)
    if type(value) is dict and type(value.get("shape")) is list and len(value["shape"]) == 1:
        return value["shape"][0] if type(value["shape"][0]) is int else -1
    return -1


def _leaves(value: Any, shape: tuple[int, ...], name: str) -> list[Any]:
    """The leaves of nested lists that have exactly this shape."""
    if type(value) is not list or len(value) != shape[0]:
        raise Invalid(f"{name}: lists not of shape {list(shape)}")
    if len(shape) == 1:
        if any(type(x) is list for x in value):
            raise Invalid(f"{name}: lists nested too deep")
        return value
    return [leaf for item in value for leaf in _leaves(item, shape[1:], name)]


def _wire(value: dict, name: str, shape: tuple[int, ...], integers: bool) -> np.ndarray:
    """A ``dtype``/``shape``/``data`` map of exactly the shape (checked before the bytes)."""
    if set(value) != {"dtype", "shape", "data"} or type(value["dtype"]) is not str:
        raise Invalid(f"{name}: not a dtype/shape/data map")
    dtype = WIRE_DTYPES.get(value["dtype"])
    declared = value["shape"]
    if dtype is None or type(declared) is not list or \
            [type(d) for d in declared] != [int] * len(shape) or tuple(declared) != shape:
        raise Invalid(f"{name}: bad dtype or shape")
    data = value["data"]
    if type(data) is not bytes or len(data) != math.prod(shape) * np.dtype(dtype).itemsize:
        raise Invalid(f"{name}: data is not the shape's bytes")
    array = np.frombuffer(data, dtype)
    if integers and array.dtype.kind not in "iu":
        raise Invalid(f"{name}: not an integer dtype")
    return array
