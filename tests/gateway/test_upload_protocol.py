"""Uploads answered inside uvicorn's protocol (``UploadProtocol``, what ``msagent serve``
runs), over real loopback sockets: the same answers as the ASGI route, one socket write per
answer, and HTTP as uvicorn speaks it (keep-alive, pipelining, ``Expect: 100-continue``, early
refusals, body caps, disconnects, HTTP/1.0)."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from redis import exceptions as rex

from msagent.gateway.app import build_app
from msagent.gateway.serve import listening_socket
from msagent.gateway.upload_protocol import UploadProtocol
from tests.gateway.conftest import Stream, encode_body, episode, make_config

PATH = "/v1/games/cartpole/episodes"


class Live:
    """A gateway served by uvicorn with UploadProtocol in a thread; counts direct answers."""

    def __init__(self, cfg: Any, redis_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self.direct: list[int] = []
        self.coroutines = 0
        original, start = UploadProtocol._write, UploadProtocol._start_coroutine

        def counting(protocol: UploadProtocol, upload: Any, response: Any) -> None:
            self.direct.append(response.status_code)
            original(protocol, upload, response)

        def counting_coroutines(protocol: UploadProtocol, upload: Any) -> None:
            self.coroutines += 1
            start(protocol, upload)

        monkeypatch.setattr(UploadProtocol, "_write", counting)
        monkeypatch.setattr(UploadProtocol, "_start_coroutine", counting_coroutines)
        self.sock = listening_socket("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(build_app(cfg, redis_url), http=UploadProtocol, ws="none",
                                log_level="warning", timeout_keep_alive=30)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)
        self.thread.start()
        while not self.server.started:
            self.thread.join(0.01)

    def connect(self) -> socket.socket:
        """A client connection."""
        conn = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def stop(self) -> None:
        """Stop the server."""
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture
def small_cfg(tmp_path):
    """A config with a 256 KiB body cap."""
    return make_config(tmp_path, rate_per_s=1e6, burst=1_000_000, max_body_bytes=256 * 1024)


@pytest.fixture
def live(small_cfg, redis_url, monkeypatch) -> Iterator[Live]:
    """The gateway on a real loopback port."""
    server = Live(small_cfg, redis_url, monkeypatch)
    yield server
    server.stop()


@pytest.fixture
def token(small_cfg) -> str:
    """An upload-and-download token of the config."""
    from msagent.gateway.tokens import TokenStore

    return TokenStore.of_data_dir(small_cfg.data_dir).create("carol", ["upload", "download"],
                                                             games=["cartpole"])[1]


@pytest.fixture
def entries(small_cfg, redis_url) -> Iterator[Stream]:
    """The config's stream."""
    reader = Stream(small_cfg, redis_url)
    yield reader
    reader.close()


def head(path: str, token: str | None, length: int | None, *extra: str,
         version: str = "1.1") -> bytes:
    """A request head."""
    lines = [f"POST {path} HTTP/{version}", "Host: gw", "Content-Type: application/msgpack"]
    lines += [f"Authorization: Bearer {token}"] if token else []
    lines += [f"Content-Length: {length}"] if length is not None else []
    return ("\r\n".join([*lines, *extra]) + "\r\n\r\n").encode()


def upload(token: str | None, body: bytes, *extra: str, version: str = "1.1") -> bytes:
    """A whole upload request."""
    return head(PATH, token, len(body), *extra, version=version) + body


def read_answer(conn: socket.socket, buffer: bytearray) -> tuple[int, dict[str, str], bytes]:
    """One answer from the connection: status, headers, body (the rest stays in buffer)."""
    while b"\r\n\r\n" not in buffer:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before an answer; got {bytes(buffer)!r}")
        buffer += chunk
    end = buffer.index(b"\r\n\r\n")
    lines = bytes(buffer[:end]).decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    length = int(headers.get("content-length", 0))
    while len(buffer) < end + 4 + length:
        buffer += conn.recv(65536)
    body = bytes(buffer[end + 4:end + 4 + length])
    del buffer[:end + 4 + length]
    return int(lines[0].split()[1]), headers, body


def body_of(seed: int = 0, **fields: Any) -> bytes:
    """A valid msgpack upload body."""
    return encode_body(episode(seed=seed, **fields))


def test_uploads_and_other_routes_share_a_keep_alive_connection(live: Live, token: str,
                                                                entries: Stream):
    conn, buffer = live.connect(), bytearray()
    conn.sendall(upload(token, body_of(0)))
    status, headers, answer = read_answer(conn, buffer)
    assert status == 201 and json.loads(answer)["status"] == "stored"
    assert headers["content-type"] == "application/json" and "date" in headers
    conn.sendall(b"GET /v1/games HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer "
                 + token.encode() + b"\r\n\r\n")
    status, _, answer = read_answer(conn, buffer)
    assert status == 200 and json.loads(answer)["games"][0]["name"] == "cartpole"
    repeat = body_of(0)
    conn.sendall(upload(token, repeat))
    assert read_answer(conn, buffer)[0] == 201
    conn.sendall(upload(token, repeat))  # the same episode id again: a duplicate
    status, _, answer = read_answer(conn, buffer)
    assert status == 200 and json.loads(answer)["status"] == "duplicate"
    assert live.direct == [201, 201, 200] and len(entries) == 2
    assert live.coroutines == 0  # each came in one read: answered without a task
    assert {r.provenance.client_id for r in entries.records()} == {"carol"}
    conn.close()


def test_pipelined_requests_are_answered_in_order(live: Live, token: str, entries: Stream):
    conn, buffer = live.connect(), bytearray()
    first, second = body_of(1), body_of(2)
    conn.sendall(upload(token, first) + upload(None, second) + upload(token, second)
                 + b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
    statuses = [read_answer(conn, buffer)[0] for _ in range(4)]
    assert statuses == [201, 401, 201, 200]
    assert len(entries) == 2 and live.direct[:1] == [201]  # the queued ones went through ASGI
    conn.close()


def test_expect_100_continue_waits_for_the_body(live: Live, token: str, entries: Stream):
    conn, buffer = live.connect(), bytearray()
    data = body_of(3)
    conn.sendall(head(PATH, token, len(data), "Expect: 100-continue"))
    assert conn.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
    conn.sendall(data)
    assert read_answer(conn, buffer)[0] == 201 and len(entries) == 1
    conn.close()


def test_a_body_in_pieces_is_read_whole(live: Live, token: str, entries: Stream):
    conn, buffer = live.connect(), bytearray()
    data = gzip.compress(body_of(4))
    conn.sendall(head(PATH, token, len(data), "Content-Encoding: gzip"))
    for start in range(0, len(data), 700):
        conn.sendall(data[start:start + 700])
        time.sleep(0.002)
    assert read_answer(conn, buffer)[0] == 201 and len(entries) == 1
    assert live.coroutines == 1 and live.direct == [201]
    conn.close()


def test_an_early_refusal_closes_the_connection_instead_of_reading_the_body(
        live: Live, token: str, entries: Stream):
    conn, buffer = live.connect(), bytearray()
    conn.sendall(head(PATH, "not-a-token", 10 * 2**30) + b"\x00" * 100)  # a 10 GB body
    status, headers, answer = read_answer(conn, buffer)
    assert status == 401 and "token" in json.loads(answer)["error"]
    assert headers["connection"] == "close"
    sent = push_until_refused(conn, seconds=3.0)
    assert sent < 32 * 2**20  # kernel buffers, not the body: the gateway read no more
    conn, buffer = live.connect(), bytearray()  # and the next connection is served
    conn.sendall(upload(token, body_of(6)))
    assert read_answer(conn, buffer)[0] == 201 and len(entries) == 1
    conn.close()


def push_until_refused(conn: socket.socket, seconds: float) -> int:
    """Send body bytes for up to ``seconds`` or until the peer refuses them; how many went."""
    chunk, sent, deadline = b"\x00" * 65536, 0, time.monotonic() + seconds
    conn.settimeout(0.5)
    try:
        while time.monotonic() < deadline:
            sent += conn.send(chunk)
    except OSError:  # reset, broken pipe, or a send that blocks: the peer stopped reading
        return sent
    raise AssertionError(f"the gateway kept reading: {sent} bytes in {seconds} s")


def test_bodies_over_the_cap_are_refused_before_they_end(live: Live, token: str,
                                                        entries: Stream):
    conn, buffer = live.connect(), bytearray()
    conn.sendall(head(PATH, token, 10**9))  # declared: refused before any body is sent
    status, _, answer = read_answer(conn, buffer)
    assert status == 413 and "larger than 262144" in json.loads(answer)["error"]
    conn.close()
    conn, buffer = live.connect(), bytearray()
    conn.sendall(head(PATH, token, None, "Transfer-Encoding: chunked"))
    chunk = b"x" * 50_000
    conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) * 6)  # past the cap; never ended
    status, _, _ = read_answer(conn, buffer)
    assert status == 413 and len(entries) == 0
    conn.close()


def test_a_client_gone_mid_body_stores_nothing_and_others_go_on(live: Live, token: str,
                                                               entries: Stream):
    gone = live.connect()
    data = body_of(7)
    gone.sendall(head(PATH, token, len(data)) + data[:1000])
    time.sleep(0.05)
    gone.close()
    conn, buffer = live.connect(), bytearray()
    conn.sendall(upload(token, body_of(8)))
    assert read_answer(conn, buffer)[0] == 201
    time.sleep(0.05)
    assert len(entries) == 1
    conn.close()


def test_http_1_0_uploads_take_uvicorn_s_path_and_close(live: Live, token: str,
                                                        entries: Stream):
    conn, buffer = live.connect(), bytearray()
    conn.sendall(upload(token, body_of(9), version="1.0"))
    status, headers, _ = read_answer(conn, buffer)
    assert status == 201 and len(entries) == 1 and live.direct == []
    assert conn.recv(10) == b""  # closed after the answer
    conn.close()


def test_bad_bodies_and_bugs_get_the_route_s_answers(live: Live, token: str, entries: Stream,
                                                    monkeypatch):
    conn, buffer = live.connect(), bytearray()
    conn.sendall(upload(token, b"\xc1 not msgpack"))
    status, _, answer = read_answer(conn, buffer)
    assert status == 400 and json.loads(answer) == {"error": "body is not valid msgpack"}
    conn.sendall(upload(token, body_of(10, rewards=None)))
    status, _, answer = read_answer(conn, buffer)
    assert status == 422 and "rewards" in json.loads(answer)["error"]
    from msagent.experience.schema import GameSchema

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(GameSchema, "validate_upload", broken)
    conn.sendall(upload(token, body_of(11)))
    status, _, answer = read_answer(conn, buffer)
    assert status == 500 and json.loads(answer) == {"error": "internal error"}
    assert live.direct == [400, 422, 500] and len(entries) == 0
    conn.close()


@pytest.mark.parametrize("error, status, reason", [
    (rex.ConnectionError("gone"), 503, "the experience stream is unavailable; retry later"),
    (rex.ResponseError("OOM command not allowed"), 503, "the experience stream is unavailable"),
    (rex.ResponseError("ERR a bug in the script"), 500, "internal error"),
])
def test_redis_failures_of_a_group_commit_are_answered_as_the_route_answers_them(
        live: Live, token: str, entries: Stream, monkeypatch, error: Exception, status: int,
        reason: str):
    from msagent.gateway.batcher import ScriptBatcher

    def failing(self: ScriptBatcher, key: Any, arg: Any) -> Any:
        future = asyncio.get_running_loop().create_future()
        future.set_exception(error)
        return future

    conn, buffer = live.connect(), bytearray()
    conn.sendall(upload(token, body_of(12)))  # the group is known to exist after this one
    assert read_answer(conn, buffer)[0] == 201
    monkeypatch.setattr(ScriptBatcher, "submit", failing)
    conn.sendall(upload(token, body_of(13)))
    got, headers, answer = read_answer(conn, buffer)
    assert got == status and json.loads(answer)["error"].startswith(reason)
    assert ("retry-after" in headers) == (status == 503)
    assert live.coroutines == 0 and len(entries) == 1
    conn.close()


@pytest.mark.parametrize(("rate", "burst", "coroutines", "statuses"), [
    (1e6, 1_000_000, 1, [201, 201, 201, 201]),  # one lease covers the rest: answered directly
    (0.01, 2, 3, [201, 201, 429]),  # leases of 1: every upload asks Redis, and the third waits
])
def test_shared_rate_limits_are_answered_directly_while_a_lease_lasts(
        tmp_path, redis_url, monkeypatch, rate: float, burst: int, coroutines: int,
        statuses: list[int]):
    """Rate limits shared through Redis (several workers): the coroutine takes a lease of the
    client's tokens, and the uploads it covers are answered without a task."""
    from msagent.gateway.tokens import TokenStore

    cfg = make_config(tmp_path, rate_per_s=rate, burst=burst, rate_limits="redis")
    token = TokenStore.of_data_dir(cfg.data_dir).create("dave", ["upload"], games=["cartpole"])[1]
    server, stream = Live(cfg, redis_url, monkeypatch), Stream(cfg, redis_url)
    try:
        conn, buffer = server.connect(), bytearray()
        answers = []
        for i in range(len(statuses)):
            conn.sendall(upload(token, body_of(40 + i)))
            answers.append(read_answer(conn, buffer))
        conn.close()
        assert [status for status, _, _ in answers] == statuses
        assert server.coroutines == coroutines
        assert len(stream) == statuses.count(201)
        if 429 in statuses:
            assert int(answers[-1][1]["retry-after"]) >= 1
    finally:
        stream.close()
        server.stop()
