"""Bounded body reading through the app: oversized, chunked and gzip-bomb bodies are refused
(413) after reading at most the cap plus one chunk (counted at the sending end)."""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import AsyncIterator

import pytest

from msagent.config.gateway import GatewayConfig
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import MSGPACK, Api, bearer, encode_body, episode

CAP = 64 * 1024
CHUNK = 8 * 1024


class Counting:
    """An async request body that counts the bytes the server pulled from it."""

    def __init__(self, chunks: AsyncIterator[bytes] | None = None) -> None:
        self.pulled = 0
        self._chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks:
            self.pulled += len(chunk)
            yield chunk


async def _endless(chunk: bytes) -> AsyncIterator[bytes]:
    while True:
        yield chunk


class Bomb:
    """1 GiB of zeros gzip-compressed on the fly; counts the MiB of zeros compressed so far."""

    def __init__(self, gib: int = 1) -> None:
        self.mib_made = 0
        self.total_mib = 1024 * gib

    async def chunks(self) -> AsyncIterator[bytes]:
        deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
        zeros = bytes(1 << 20)
        for _ in range(self.total_mib):
            self.mib_made += 1
            out = deflate.compress(zeros) + deflate.flush(zlib.Z_SYNC_FLUSH)
            yield out
        yield deflate.flush()


@pytest.fixture
def small(tmp_path, redis_url) -> tuple[Api, str]:
    """An app with a 64 KiB body cap, and an upload token."""
    from tests.gateway.conftest import make_config

    cfg: GatewayConfig = make_config(tmp_path, max_body_bytes=CAP)
    token = TokenStore.of_data_dir(cfg.data_dir).create("alice", ["upload"], games=["cartpole"])[1]
    api = Api(cfg, redis_url)
    yield api, token
    api.close()


def _post(api: Api, token: str, content, headers: dict | None = None):
    return api.request("POST", "/v1/games/cartpole/episodes", content=content,
                       headers={**MSGPACK, **bearer(token), **(headers or {})})


def test_declared_oversized_length_is_refused_before_reading(small):
    api, token = small
    body = Counting(_endless(bytes(CHUNK)))
    response = _post(api, token, body, {"Content-Length": str(10 * CAP)})
    assert response.status_code == 413
    assert "larger than" in response.json()["error"]
    assert body.pulled == 0


def test_oversized_chunked_body_stops_after_cap_plus_one_chunk(small):
    api, token = small
    body = Counting(_endless(bytes(CHUNK)))
    response = _post(api, token, body)
    assert response.status_code == 413
    assert CAP < body.pulled <= CAP + CHUNK


def test_gzip_bomb_is_refused_after_cap_bytes_of_output(small):
    api, token = small
    bomb = Bomb()
    body = Counting(bomb.chunks())
    started = time.perf_counter()
    response = _post(api, token, body, {"Content-Encoding": "gzip"})
    assert response.status_code == 413
    assert bomb.mib_made <= 2  # of 1024: inflating stopped at the cap (64 KiB of output)
    assert time.perf_counter() - started < 10


def test_gzip_of_a_body_just_over_the_cap_is_refused_but_under_it_accepted(small):
    api, token = small
    under = encode_body(episode(200))
    assert len(under) < CAP
    ok = _post(api, token, gzip.compress(under), {"Content-Encoding": "gzip"})
    assert ok.status_code == 201, ok.text
    over = encode_body(episode(200, client_version="x" * CAP))  # compresses well, inflates big
    assert len(gzip.compress(over)) < CAP < len(over)
    refused = _post(api, token, gzip.compress(over), {"Content-Encoding": "gzip"})
    assert refused.status_code == 413


def test_streamed_body_under_the_cap_is_read_whole(small):
    api, token = small
    data = encode_body(episode(100))

    async def pieces() -> AsyncIterator[bytes]:
        for i in range(0, len(data), 1000):
            yield data[i:i + 1000]

    response = _post(api, token, Counting(pieces()))
    assert response.status_code == 201, response.text
