"""What one connection may cost the gateway before any token is checked (``BoundedHttpProtocol``
under ``msagent serve``'s ``UploadProtocol``), over real loopback sockets: heads past their cap
are 431, heads and bodies that stall are 408, connections past the bound are 503, malformed
HTTP is a JSON 400; and no redirect or docs page trusts the client's Host or a CDN."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import Stream, make_config
from tests.gateway.test_upload_protocol import (PATH, Live, body_of, head, push_until_refused,
                                                read_answer, upload)

LIMITS = {"max_head_bytes": 4096, "head_timeout_s": 1.0, "body_idle_timeout_s": 1.0,
          "max_connections": 8}


@pytest.fixture
def bounded_cfg(tmp_path):
    """A config with small HTTP bounds (a 4 KiB head, 1 s timeouts, 8 connections)."""
    return make_config(tmp_path, rate_per_s=1e6, burst=1_000_000, **LIMITS)


@pytest.fixture
def live(bounded_cfg, redis_url, monkeypatch) -> Iterator[Live]:
    """The gateway on a real loopback port."""
    server = Live(bounded_cfg, redis_url, monkeypatch)
    yield server
    server.stop()


@pytest.fixture
def token(bounded_cfg) -> str:
    """An upload-and-download token."""
    store = TokenStore.of_data_dir(bounded_cfg.data_dir)
    return store.create("carol", ["upload", "download"], all_games=True)[1]


@pytest.fixture
def entries(bounded_cfg, redis_url) -> Iterator[Stream]:
    """The config's stream."""
    reader = Stream(bounded_cfg, redis_url)
    yield reader
    reader.close()


def closed_after(conn: socket.socket, buffer: bytearray) -> bool:
    """Whether the server closed the connection once its answer was read (EOF or reset)."""
    conn.settimeout(3)
    try:
        return not buffer and conn.recv(1) == b""
    except ConnectionResetError:
        return True


def refusal(conn: socket.socket) -> tuple[int, str, dict[str, str]]:
    """The status, JSON reason and headers of the server's answer, which must close."""
    buffer = bytearray()
    status, headers, answer = read_answer(conn, buffer)
    assert headers["connection"] == "close" and closed_after(conn, buffer)
    return status, json.loads(answer)["error"], headers


def healthy(live: Live) -> bool:
    """Whether another client is answered at once."""
    conn = live.connect()
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
    ok = read_answer(conn, bytearray())[0] == 200
    conn.close()
    return ok


@pytest.mark.parametrize("method, path", [("POST", PATH), ("GET", "/v1/games")])
def test_a_huge_header_sent_in_pieces_is_431_after_little_work(live: Live, method: str,
                                                              path: str):
    conn = live.connect()
    conn.sendall(f"{method} {path} HTTP/1.1\r\nHost: gw\r\nX-Pad: ".encode())
    started, sent = time.monotonic(), 0
    try:
        while sent < 8 * 2**20:  # 8 MiB of one header value, 64 KiB a write
            conn.sendall(b"a" * 65536)
            sent += 65536
            time.sleep(0.001)
    except OSError:  # refused and closed while still sending
        pass
    status, reason, _ = refusal(conn)
    assert status == 431 and "request head larger than 4096 bytes" in reason
    assert sent < 2 * 2**20 and time.monotonic() - started < 2  # stopped early, cheaply
    assert healthy(live)


def test_a_long_head_in_one_read_is_431_and_a_head_within_the_cap_is_served(
        live: Live, token: str, entries: Stream):
    conn = live.connect()
    conn.sendall(b"GET /v1/games?" + b"q" * 5000 + b" HTTP/1.1\r\nHost: gw\r\n\r\n")
    assert refusal(conn)[0] == 431
    conn = live.connect()
    conn.sendall(upload(token, body_of(1), "X-Pad: " + "p" * 3000))  # under 4 KiB in all
    assert read_answer(conn, bytearray())[0] == 201 and len(entries) == 1
    conn.close()


@pytest.mark.slow
def test_a_silent_connection_and_a_slow_head_are_408(live: Live):
    silent = live.connect()
    started = time.monotonic()
    status, reason, _ = refusal(silent)
    assert status == 408 and "head not received within 1 s" in reason
    assert 0.9 < time.monotonic() - started < 2.5
    slow = live.connect()  # a byte every 0.2 s: the clock runs from the connection's start
    started = time.monotonic()
    with pytest.raises(OSError):
        for byte in b"GET /healthz HTTP/1.1\r\nHost: gw\r\n":
            slow.send(bytes([byte]))
            time.sleep(0.2)
    assert refusal(slow)[0] == 408 and time.monotonic() - started < 2.5


def test_a_stalled_body_is_408_and_stores_nothing(live: Live, token: str, entries: Stream):
    data = body_of(2)
    conn = live.connect()
    conn.sendall(head(PATH, token, len(data)) + data[:1000])
    started = time.monotonic()
    status, reason, _ = refusal(conn)
    assert status == 408 and "body stalled for 1 s" in reason
    assert 0.9 < time.monotonic() - started < 2.5 and len(entries) == 0
    assert healthy(live)


@pytest.mark.slow
def test_a_body_that_keeps_coming_is_not_cut_off(live: Live, token: str, entries: Stream):
    data = body_of(3)
    conn = live.connect()
    conn.sendall(head(PATH, token, len(data)))
    for start in range(0, len(data), 1000):  # 0.3 s a piece: slower than the head's whole
        conn.sendall(data[start:start + 1000])  # time, within the body's idle bound
        time.sleep(0.3)
    assert read_answer(conn, bytearray())[0] == 201 and len(entries) == 1
    conn.close()


def test_connections_past_the_bound_are_503_and_the_bound_frees_up(live: Live):
    held = [live.connect() for _ in range(8)]
    time.sleep(0.2)
    extra = live.connect()
    status, reason, headers = refusal(extra)
    assert status == 503 and "too many open connections" in reason
    assert headers["retry-after"] == "1"
    held.pop().close()
    time.sleep(0.2)
    assert healthy(live)
    for conn in held:
        conn.close()


def test_an_early_answer_on_another_route_closes_instead_of_reading_the_body(live: Live):
    conn = live.connect()
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: gw\r\nContent-Length: 10737418240\r\n\r\n")
    buffer = bytearray()
    status, headers, _ = read_answer(conn, buffer)
    assert status == 200 and headers["connection"] == "close"
    assert push_until_refused(conn, seconds=3.0) < 32 * 2**20


@pytest.mark.parametrize("garbage", [b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
                                     b"GET / HTTP/9.9\r\n\r\n",
                                     b"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n"])
def test_malformed_http_is_a_json_400(live: Live, garbage: bytes):
    conn = live.connect()
    conn.sendall(garbage)
    status, reason, _ = refusal(conn)
    assert status == 400 and reason == "invalid HTTP request"


def test_a_trailing_slash_is_not_redirected_to_the_clients_host(live: Live, token: str):
    conn = live.connect()
    conn.sendall(b"GET /v1/games/ HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer "
                 + token.encode() + b"\r\n\r\n")
    status, headers, answer = read_answer(conn, bytearray())
    assert status == 404 and "location" not in headers and json.loads(answer)["error"]
    conn.close()


def test_api_docs_are_off_by_default_and_served_locally_when_on(tmp_path, redis_url,
                                                                monkeypatch):
    def get(server: Live, path: str) -> tuple[int, bytes]:
        conn = server.connect()
        conn.sendall(f"GET {path} HTTP/1.1\r\nHost: gw\r\n\r\n".encode())
        status, _, answer = read_answer(conn, bytearray())
        conn.close()
        return status, answer

    off = Live(make_config(tmp_path / "off"), redis_url, monkeypatch)
    try:
        assert get(off, "/docs")[0] == 404 and get(off, "/openapi.json")[0] == 200
    finally:
        off.stop()
    on = Live(make_config(tmp_path / "on", docs=True), redis_url, monkeypatch)
    try:
        status, page = get(on, "/docs")
        assert status == 200 and b"/docs/assets/swagger-ui-bundle.js" in page
        assert b"cdn" not in page.lower() and b"https://" not in page
        status, script = get(on, "/docs/assets/swagger-ui-bundle.js")
        assert status == 200 and len(script) > 100_000
    finally:
        on.stop()


@pytest.mark.slow
def test_many_slow_clients_do_not_stop_the_others(live: Live, token: str, entries: Stream):
    """Six connections stall in their heads and bodies; uploads on others go on meanwhile."""
    stalled = [live.connect() for _ in range(3)]
    for conn in stalled[:2]:
        conn.sendall(b"POST " + PATH.encode() + b" HTTP/1.1\r\nHost: gw\r\n")
    data = body_of(4)
    stalled[2].sendall(head(PATH, token, len(data)) + data[:10])
    answers = []

    def uploads() -> None:
        conn = live.connect()
        for seed in range(10, 15):
            conn.sendall(upload(token, body_of(seed)))
            answers.append(read_answer(conn, bytearray())[0])
        conn.close()

    worker = threading.Thread(target=uploads)
    started = time.monotonic()
    worker.start()
    worker.join(5)
    assert answers == [201] * 5 and time.monotonic() - started < 1.0
    assert all(refusal(conn)[0] == 408 for conn in stalled)
    assert len(entries) == 5


@pytest.mark.slow
def test_msagent_serve_with_two_workers_bounds_every_connection(tmp_path, redis_url):
    from msagent.gateway.redis_server import free_loopback_port
    from tests.gateway.test_serve import _serve, _write_config

    more = ("rate_per_s = 100000.0\nburst = 100000\nworkers = 2\nmax_head_bytes = 4096\n"
            "head_timeout_s = 1.0\nbody_idle_timeout_s = 1.0\nmax_connections = 4\n")
    port, log = free_loopback_port(), tmp_path / "serve.log"
    proc = _serve(_write_config(tmp_path, redis_url, ingest=False, more=more), port, log)
    try:
        def connect() -> socket.socket:
            return socket.create_connection(("127.0.0.1", port), timeout=10)

        big = connect()  # each worker process refuses a long head, whichever takes it
        big.sendall(b"GET /v1/games HTTP/1.1\r\nHost: gw\r\nX-Pad: " + b"a" * 300_000)
        assert refusal(big)[0] == 431
        assert refusal(connect())[0] == 408  # silent
        held = [connect() for _ in range(12)]  # 4 a worker: some of these are refused
        time.sleep(0.3)
        statuses = []
        for conn in held:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
            statuses.append(read_answer(conn, bytearray())[0])
            conn.close()
        assert 503 in statuses and statuses.count(200) <= 8
    finally:
        proc.terminate()
        proc.wait(60)


@pytest.mark.parametrize("request_bytes, status, reason", [
    (b"POST %s HTTP/2.0\r\nHost: gw\r\n" % PATH.encode(), 400, "HTTP version"),
    (b"POST %s\r\nHost: gw\r\n" % PATH.encode(), 400, "HTTP version"),  # no version: 0.9
    (b"POST %s HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: gzip, chunked\r\n" % PATH.encode(),
     400, "transfer codings"),
    (b"POST %s HTTP/1.0\r\nHost: gw\r\nTransfer-Encoding: Chunked\r\n" % PATH.encode(),
     400, "HTTP/1.0 has no Transfer-Encoding"),
    (b"POST %s HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n" % PATH.encode(),
     400, "upgrades"),
    (b"POST %s HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
     % PATH.encode(), 400, "upgrades"),
])
def test_http_the_gateway_does_not_speak_is_refused_and_stores_nothing(
        live: Live, token: str, entries: Stream, request_bytes: bytes, status: int, reason: str):
    data = body_of(5)
    if b"chunked" in request_bytes.lower():
        framed = b"\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)
    else:
        framed = b"Content-Length: %d\r\n\r\n" % len(data) + data
    conn = live.connect()
    conn.sendall(request_bytes + b"Content-Type: application/msgpack\r\nAuthorization: Bearer "
                 + token.encode() + b"\r\n" + framed)
    got_status, got_reason, _ = refusal(conn)
    assert (got_status, reason in got_reason) == (status, True), got_reason
    assert len(entries) == 0


def test_an_upgrade_without_a_body_is_answered_and_the_connection_closed(live: Live):
    conn = live.connect()
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: gw\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                 b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n")
    buffer = bytearray()
    status, headers, _ = read_answer(conn, buffer)
    assert status == 200 and headers["connection"] == "close" and closed_after(conn, buffer)


def test_answers_before_a_malformed_request_go_out_first_in_order(live: Live, token: str,
                                                                  entries: Stream):
    conn = live.connect()
    conn.sendall(upload(token, body_of(6)) + b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n"
                 + b"\x16\x03\x01 not http\r\n\r\n")
    buffer = bytearray()
    assert read_answer(conn, buffer)[0] == 201 and read_answer(conn, buffer)[0] == 200
    status, headers, answer = read_answer(conn, buffer)
    assert (status, json.loads(answer)) == (400, {"error": "invalid HTTP request"})
    assert headers["connection"] == "close" and closed_after(conn, buffer)
    assert len(entries) == 1


def test_a_connection_queueing_too_many_requests_is_closed(live: Live):
    conn = live.connect()
    conn.sendall(b"GET /nothing-here HTTP/1.1\r\nHost: gw\r\n\r\n" * 300)
    conn.settimeout(5)
    answers = b""
    try:
        while chunk := conn.recv(65536):
            answers += chunk
    except ConnectionResetError:
        pass
    assert answers.count(b"HTTP/1.1 404") <= 33  # closed: never 300 answers
    assert healthy(live)


@pytest.mark.slow
def test_a_body_trickled_forever_is_408_after_the_whole_bodys_time(tmp_path, redis_url,
                                                                   monkeypatch):
    cfg = make_config(tmp_path, rate_per_s=1e6, burst=1_000_000, body_timeout_s=2.0,
                      body_idle_timeout_s=1.0)
    server = Live(cfg, redis_url, monkeypatch)
    try:
        token = TokenStore.of_data_dir(cfg.data_dir).create("carol", ["upload"],
                                                            all_games=True)[1]
        data = body_of(7)
        conn = server.connect()
        conn.sendall(head(PATH, token, len(data)))
        started = time.monotonic()
        with pytest.raises(OSError):
            for byte in data:  # never a pause of a second, yet never done
                conn.send(bytes([byte]))
                time.sleep(0.3)
        status, reason, _ = refusal(conn)
        assert status == 408 and "body not received within 2 s" in reason
        assert 1.9 < time.monotonic() - started < 3.5
    finally:
        server.stop()
