"""The hostile-client benchmark's ``tokens``, ``games`` and ``slow`` families, and
:func:`make_case` / :func:`slow_case`, which draw case ``i`` of a seed."""

from __future__ import annotations

from collections.abc import Callable

from hostile_bodies import valid_body
from hostile_cases import (PATH, TYPES, Case, Draw, Tokens, bearer, bodies_case,
                           encodings_case, request, schema_case, upload)
from hostile_heads import heads_case
from hostile_http import parse_requests

CARTPOLE = PATH.format("cartpole")


# ------------------------------------------------------------------------------ tokens


def tokens_case(d: Draw) -> tuple[str, list[bytes]]:
    """A valid cartpole episode under every kind of wrong, odd or right Authorization."""
    t, token = d.tokens, d.token()
    choices: list[tuple[str, list[bytes]]] = [
        ("missing", []), ("empty", [b"Authorization:"]),
        ("scheme only", [b"Authorization: Bearer"]), ("blank", [b"Authorization: Bearer    "]),
        ("basic", [b"Authorization: Basic dXNlcjpwYXNz"]),
        ("wrong scheme", [b"Authorization: Token " + token.encode()]),
        ("lower-case scheme", [b"Authorization: bearer " + token.encode()]),
        ("upper-case scheme", [b"Authorization: BEARER " + token.encode()]),
        ("two spaces", [b"Authorization: Bearer  " + token.encode()]),
        ("tab", [b"Authorization: Bearer\t" + token.encode()]),
        ("unknown", [bearer("msa_" + d.rng.randbytes(32).hex()[:43])]),
        ("truncated", [bearer(token[:-1])]), ("one more char", [bearer(token + "x")]),
        ("revoked", [bearer(t.revoked)]), ("expired", [bearer(t.expired)]),
        ("download-only", [bearer(t.download)]), ("admin-only", [bearer(t.admin)]),
        ("another game's", [bearer(t.pixels)]), ("all games", [bearer(t.all_games)]),
        ("very long", [bearer("msa_" + "A" * d.rng.choice([10_000, 15_000]))]),
        ("non-ASCII", [bearer(d.rng.choice(["msa_é".encode(), b"msa_\xff\xfe", "msa_🎮".encode(),
                                            token.encode()[:-2] + "é".encode()]))]),
        ("NUL inside", [bearer(token[:10].encode() + b"\x00" + token[10:].encode())]),
        ("first valid of two", [bearer(token), bearer("msa_bad")]),
        ("second valid of two", [bearer("msa_bad"), bearer(token)]),
        ("two in one", [b"Authorization: Bearer " + token.encode() + b", Bearer msa_x"])]
    name, headers = d.rng.choice(choices)
    kind = d.kind()
    body = valid_body(d.rng, "cartpole", d.episode_id(), kind)
    return name, [request(CARTPOLE, [*headers, b"Content-Type: " + TYPES[kind]], body)]


# ------------------------------------------------------------------------------ games


def games_case(d: Draw) -> tuple[str, list[bytes]]:
    """A valid cartpole episode sent to games that do not exist, path tricks, and look-alikes
    of the game's name, with a cartpole token or an all-games one."""
    game = d.rng.choice([
        "pong", "CartPole", "cartpole%20", "../cartpole", "%2e%2e", "..%2Fcartpole",
        "cartpole%2Fepisodes", "%63artpole", "c" * d.rng.choice([200, 5000]),
        "c%C3%A1rtpole", "cartpole%00", "", ".", "..", "cartpole?x=1", "pixels", "pixels",
        "%2e", "cart%2fpole", "cartpole%", "cartpole%zz", "%ff%fe", "cartpole;x"])
    target = d.rng.choice([PATH.format(game), PATH.format(game) + "/",
                           "/V1/games/cartpole/episodes", "/v1//games/cartpole/episodes",
                           "/v1/games/cartpole/./episodes", "/v1/games/x/../cartpole/episodes"]
                          if d.rng.random() < 0.15 else [PATH.format(game)])
    token = d.tokens.all_games if d.rng.random() < 0.5 else d.token()
    raw = d.rng.random() < 0.05  # the name's bytes unencoded in the target
    return game[:20], [upload(d, game="cartpole", token=token,
                              target=target.replace("c%C3%A1", "cá").encode() if raw else target)]


# ------------------------------------------------------------------------------ slow


def slow_case(seed: int, index: int, tokens: Tokens, only: frozenset[str] = frozenset()) -> Case:
    """A client that holds its connection ~10 s: a slowloris head, an idle connection, a
    stalled or trickled body, ``Expect: 100-continue`` without the body, or a pipeline that
    is never read; each should meet the gateway's timeouts (408) or early refusals."""
    d = Draw(seed, 1_000_000 + index, tokens)
    name, make = d.rng.choice(SLOW_KINDS)
    case = Case(index, "slow", name, [], wait_s=13.0)
    make(d, case)
    return case


def _slowloris(d: Draw, case: Case) -> None:
    """A head sent a few bytes a second, never finished."""
    head = b"POST %s HTTP/1.1\r\nHost: x\r\n" % CARTPOLE.encode() + b"X-A: b\r\n" * 10
    case.pieces, case.pause_s = [head[i:i + 4] for i in range(0, 60, 4)], 1.0


def _idle(d: Draw, case: Case) -> None:
    """A connection that sends nothing."""
    case.pieces = [b""]


def _stalled(d: Draw, case: Case) -> None:
    """A valid upload's head and half its body, then nothing (or with a bad token: refused
    at once)."""
    token = d.token() if d.rng.random() < 0.8 else "msa_bad"
    data = upload(d, token=token)
    cut = data.index(b"\r\n\r\n") + 4 + d.rng.randint(0, 50)
    case.pieces = [data[:cut]]


def _trickle(d: Draw, case: Case) -> None:
    """A valid upload's body a byte every 2 s (the client gives up after ~12 s)."""
    data = upload(d)
    cut = data.index(b"\r\n\r\n") + 4
    case.pieces = [data[:cut]] + [data[i:i + 1] for i in range(cut, cut + 6)]
    case.pause_s, case.wait_s = 2.0, 1.0


def _expect_no_body(d: Draw, case: Case) -> None:
    """``Expect: 100-continue`` and no body after the 100."""
    data = upload(d, extra=[b"Expect: 100-continue"])
    case.pieces = [data[:data.index(b"\r\n\r\n") + 4]]


def _unread_pipeline(d: Draw, case: Case) -> None:
    """Hundreds of pipelined requests whose answers are not read for 5 s."""
    one = request("/nothing-here", [], method=b"GET")
    case.pieces, case.expect, case.read_delay_s, case.wait_s = [one * 300], 300, 5.0, 10.0


SLOW_KINDS: list[tuple[str, Callable[[Draw, Case], None]]] = [
    ("slowloris head", _slowloris), ("idle connection", _idle), ("stalled body", _stalled),
    ("stalled body", _stalled), ("trickled body", _trickle),
    ("Expect without body", _expect_no_body), ("unread pipeline", _unread_pipeline)]


# ------------------------------------------------------------------------------ draw


FAMILIES: list[tuple[str, float, Callable[[Draw], tuple[str, list[bytes]]]]] = [
    ("schema", 0.34, schema_case), ("bodies", 0.14, bodies_case), ("heads", 0.22, heads_case),
    ("tokens", 0.10, tokens_case), ("games", 0.08, games_case),
    ("encodings", 0.12, encodings_case)]


def make_case(seed: int, index: int, tokens: Tokens, only: frozenset[str] = frozenset()) -> Case:
    """Case ``index`` of the seed: a family by weight (among ``only``, if given), then a kind
    of it; how many answers to wait for comes from the reference's reading of the bytes, and
    a case of several pieces sends them 2 ms apart (so they arrive as separate reads)."""
    d = Draw(seed, index, tokens)
    names, weights, makers = zip(*FAMILIES)
    if only:
        weights = tuple(w if n in only else 0.0 for n, w in zip(names, weights))
    family = d.rng.choices(range(len(FAMILIES)), weights)[0]
    kind, pieces = makers[family](d)
    case = Case(index, names[family], kind, pieces, pause_s=0.002 if len(pieces) > 1 else 0.0)
    parsed = parse_requests(case.data)
    incomplete = parsed.error is not None and ("incomplete" in parsed.error
                                               or "shorter" in parsed.error)
    case.expect = len(parsed.requests) + (2 if parsed.error and not incomplete else 0)
    case.expect = max(case.expect, 1)  # after a framing error: read on, in case of a desync
    if incomplete:  # the gateway waits for the rest; an early refusal comes at once
        case.wait_s = 1.0
    case.extra["parsed"] = parsed
    return case
