"""Bounded decoding of uploads (findings 6, 7 and 9): a declared shape with a huge dimension,
a body of empty maps or lists, a client sending large bodies too fast, identifiers with a
trailing newline. Each is a 4xx naming the problem, costs the gateway memory of a few times
the body's size at most, logs no traceback and puts nothing on the stream."""

from __future__ import annotations

import json
import logging
import time
import tracemalloc
from pathlib import Path

import msgpack
import pytest
from pydantic import ValidationError

from msagent.config.gateway import GatewayConfig
from msagent.experience.records import encode_array
from msagent.gateway.tokens import TokenError, TokenStore
from tests.gateway.conftest import Api, Stream, encode_body, episode, make_config
from tests.gateway.test_upload_protocol import Live, read_answer, upload

MiB = 1 << 20


def _msgpack(**fields: object) -> bytes:
    """A cartpole msgpack body with some fields replaced (arrays encoded as maps)."""
    body = {**episode(10), **fields}
    return msgpack.packb({k: encode_array(v) if hasattr(v, "dtype") else v
                          for k, v in body.items()}, use_bin_type=True)


HUGE_SHAPES = {"0 x 2**62": [0, 2**62], "2**62 x 0": [2**62, 0],
               "8 dims, one 2**62": [0] * 7 + [2**62]}


@pytest.mark.parametrize("field", ["observations", "rewards", "log_probs"])
@pytest.mark.parametrize("shape", list(HUGE_SHAPES.values()), ids=list(HUGE_SHAPES))
def test_a_zero_element_array_with_a_huge_dimension_is_422_naming_the_field(
        api: Api, tokens: dict, stream: Stream, caplog: pytest.LogCaptureFixture,
        field: str, shape: list[int]):
    data = _msgpack(**{field: {"dtype": "<f4", "shape": shape, "data": b""}})
    with caplog.at_level(logging.INFO):
        response = api.upload(tokens["alice"], data)
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith(f"{field}: shape")
    assert [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
    assert len(stream) == 0


def hostile(fmt: str, what: str, size: int) -> bytes:
    """A cartpole upload whose observations are ``size`` bytes of empty maps, empty lists or
    small nested lists (``[[[0]]]``); msgpack's in lists of at most 500 items (as long as a
    cartpole upload's lists may be), so that only the number of maps and lists is too much."""
    unit = {"maps": {}, "lists": [], "nested": [[[0]]]}[what]
    if fmt == "msgpack":
        items = [unit] * (size // len(msgpack.packb(unit)))
        while len(items) > 500:
            items = [items[i:i + 500] for i in range(0, len(items), 500)]
        return _msgpack(observations=items)
    text = {"maps": b"{},", "lists": b"[],", "nested": b"[[[0]]],"}[what]
    items = (text * (size // len(text)))[:-1]
    return (b'{"episode_id":"x1","rewards":[0.0],"actions":[0],"terminated":true,'
            b'"truncated":false,"observations":[' + items + b"]}")


@pytest.mark.parametrize("what", ["maps", "lists", "nested"])
@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_a_megabyte_of_empty_maps_or_lists_is_refused_quickly_in_bounded_memory(
        api: Api, tokens: dict, stream: Stream, fmt: str, what: str):
    data = hostile(fmt, what, MiB)
    api.upload(tokens["alice"], _msgpack())  # warm the app: its first request builds state
    tracemalloc.start()
    try:
        response = api.upload(tokens["alice"], data, fmt=fmt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 413, response.text
    assert "maps and lists" in response.json()["error"]  # the limit it passed, named
    assert peak < 4 * len(data), f"peak {peak / MiB:.1f} MiB for a {len(data) / MiB:.1f} MiB body"
    start = time.perf_counter()
    assert api.upload(tokens["alice"], data, fmt=fmt).status_code == 413
    assert time.perf_counter() - start < 0.5
    assert len(stream) == 1  # the warm-up only


def test_nested_list_headers_declaring_many_items_cost_no_memory(api: Api, tokens: dict,
                                                                stream: Stream):
    headers = b"\xdc\x0b\xb8" * 1000  # 1,000 nested lists, each declaring 3,000 items
    data = b"\x81" + msgpack.packb("observations") + headers
    tracemalloc.start()
    try:
        response = api.upload(tokens["alice"], data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code in (400, 413), response.text  # incomplete, or too long
    assert peak < 1 * MiB, f"peak {peak / MiB:.1f} MiB for a {len(data)}-byte body"
    assert len(stream) == 0


@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_a_string_among_numbers_is_422_without_building_a_string_array(
        api: Api, tokens: dict, stream: Stream, fmt: str):
    text = "x" * (200 if fmt == "msgpack" else 100_000)  # msgpack: at most 256 bytes
    observations = [[text, 0.0, 0.0, 0.0]] + [[0.0] * 4] * 499
    body = {**episode(500), "observations": observations}
    data = _msgpack(**body) if fmt == "msgpack" else json.dumps(
        {k: v.tolist() if hasattr(v, "tolist") else v for k, v in body.items()}).encode()
    tracemalloc.start()
    try:
        response = api.upload(tokens["alice"], data, fmt=fmt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith("observations: lists must be rectangular")
    assert peak < 8 * len(data), f"peak {peak / MiB:.1f} MiB for a {len(data) / MiB:.2f} MiB body"
    assert len(stream) == 0  # (lists decode to ~4x their msgpack: a float's 9 bytes take 32)


def test_a_list_longer_than_the_game_needs_is_413_and_its_own_shapes_upload(
        api: Api, tokens: dict, stream: Stream):
    response = api.upload(tokens["alice"], _msgpack(rewards=[0.0] * 501))  # at most 500 steps
    assert response.status_code == 413, response.text
    assert "max_array_len(500)" in response.json()["error"]
    assert len(stream) == 0
    for game, steps in (("cartpole", 500), ("pixels", 20)):  # the longest, as nested lists
        lists = {k: v.tolist() if hasattr(v, "tolist") else v
                 for k, v in episode(steps, game=game).items()}
        assert api.upload(tokens["alice"], msgpack.packb(lists), game=game).status_code == 201
        lists["episode_id"] += "-json"
        assert api.upload(tokens["alice"], lists, game=game, fmt="json").status_code == 201
    assert len(stream) == 4


def _byte_limited(tmp_path: Path) -> tuple[GatewayConfig, str, str]:
    """A config whose clients may send 40 kB at once and 1 kB/s after (bodies up to 20 kB),
    and upload tokens of alice and bob."""
    cfg = make_config(tmp_path, rate_per_s=1e6, burst=1_000_000, max_body_bytes=20_000,
                      rate_bytes_per_s=1000, burst_bytes=40_000)
    store = TokenStore.of_data_dir(cfg.data_dir)
    alice, bob = (store.create(c, ["upload"], games=["cartpole"])[1] for c in ("alice", "bob"))
    return cfg, alice, bob


def test_large_uploads_past_the_byte_rate_are_429_and_other_clients_go_on(
        tmp_path: Path, redis_url: str):
    cfg, alice, bob = _byte_limited(tmp_path)
    api, stream = Api(cfg, redis_url), Stream(cfg, redis_url)
    try:
        large = [episode(500) for _ in range(3)]  # ~16 kB each as msgpack
        statuses = [api.upload(alice, body) for body in large]
        assert [r.status_code for r in statuses] == [201, 201, 429]
        assert "bytes" in statuses[2].json()["error"]
        assert int(statuses[2].headers["Retry-After"]) >= 5  # ~8.8 kB short at 1 kB/s
        assert [api.upload(bob, episode(10)).status_code for _ in range(5)] == [201] * 5
        assert len(stream) == 7
    finally:
        api.close()
        stream.close()


def test_the_byte_rate_holds_for_uploads_answered_in_the_protocol(
        tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch):
    cfg, alice, bob = _byte_limited(tmp_path)
    live, stream = Live(cfg, redis_url, monkeypatch), Stream(cfg, redis_url)
    try:
        conn, buffer, answers = live.connect(), bytearray(), []
        for _ in range(3):  # one at a time: each answered in the protocol, synchronously
            conn.sendall(upload(alice, encode_body(episode(500))))
            answers.append(read_answer(conn, buffer))
        assert [status for status, _, _ in answers] == [201, 201, 429]
        assert int(answers[2][1]["retry-after"]) >= 5
        conn.sendall(upload(bob, encode_body(episode(10))))
        assert read_answer(conn, buffer)[0] == 201
        assert live.direct == [201, 201, 429, 201] and live.coroutines == 0
        assert len(stream) == 3
        conn.close()
    finally:
        live.stop()
        stream.close()


def test_the_byte_burst_must_hold_a_whole_body(tmp_path: Path):
    with pytest.raises(ValidationError, match="burst_bytes"):
        make_config(tmp_path, max_body_bytes=1 * MiB, burst_bytes=MiB - 1)
    default = make_config(tmp_path, max_body_bytes=1 * MiB).gateway
    assert default.byte_burst == 4 * MiB  # four max-size bodies in a row


@pytest.mark.parametrize("fmt", ["msgpack", "json"])
def test_an_episode_id_with_a_trailing_newline_is_422(api: Api, tokens: dict, stream: Stream,
                                                      fmt: str):
    response = api.upload(tokens["alice"], episode(5, episode_id="a\n"), fmt=fmt)
    assert response.status_code == 422, response.text
    assert response.json()["error"].startswith("episode_id")
    assert len(stream) == 0


def test_a_client_name_with_a_trailing_newline_is_refused(tmp_path: Path):
    store = TokenStore(tmp_path / "tokens.json")
    with pytest.raises(TokenError, match="bad client name"):
        store.create("a\n", ["upload"], all_games=True)
    assert store.list() == []
