"""When Redis is down or the backlog too high, uploads get 503 with Retry-After and nothing is
accepted; when Redis is back, uploads go through again without restarting the gateway."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from msagent.gateway.redis_server import answers_ping, free_loopback_port, stop_process
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import Api, Stream, bearer, episode, make_config


class PrivateRedis:
    """A redis-server of one test, on a fixed port, append-only, that can be stopped and
    started again (same port, same data)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port, self.proc = folder, free_loopback_port(), None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [shutil.which("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "yes", "--dir", str(self.folder)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        for _ in range(500):
            if answers_ping(self.port):
                return
            assert self.proc.poll() is None, "redis-server exited"
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        stop_process(self.proc, 10)


@pytest.fixture
def private_redis(tmp_path: Path, redis_url: str) -> Iterator[PrivateRedis]:
    """Skips with the session's Redis fixture when redis-server is not installed."""
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("limits", ["process", "redis"])
def test_redis_down_means_503_and_nothing_accepted(tmp_path: Path,
                                                   private_redis: PrivateRedis, limits: str):
    cfg = make_config(tmp_path, rate_limits=limits)
    store = TokenStore.of_data_dir(cfg.data_dir)
    token = store.create("alice", ["upload"], games=["cartpole"])[1]
    admin = store.create("ops", ["admin"], all_games=True)[1]
    api, stream = Api(cfg, private_redis.url), Stream(cfg, private_redis.url)
    try:
        assert api.upload(token, episode(5)).status_code == 201
        private_redis.stop()
        refused_body = episode(5)
        for _ in range(3):
            refused = api.upload(token, refused_body)
            assert refused.status_code == 503, refused.text
            assert refused.headers["Retry-After"] == "1"
            assert "unavailable" in refused.json()["error"]
        assert api.request("GET", "/healthz").status_code == 503
        assert api.request("GET", "/v1/admin/stats", headers=bearer(admin)).status_code == 503
        private_redis.start()
        assert api.request("GET", "/healthz").json() == {"redis": "ok"}
        assert api.upload(token, refused_body).status_code == 201  # not stored before
        assert api.upload(token, episode(5)).status_code == 201
        assert len(stream) == 3
    finally:
        api.close()
        stream.close()


def test_backlog_above_max_is_refused_until_ingested(tmp_path: Path, redis_url: str):
    cfg = make_config(tmp_path, max_backlog=3)
    token = TokenStore.of_data_dir(cfg.data_dir).create("alice", ["upload"],
                                                        games=["cartpole"])[1]
    api, stream = Api(cfg, redis_url), Stream(cfg, redis_url)
    try:
        first = episode(5)
        assert api.upload(token, first).status_code == 201
        assert [api.upload(token, episode(5)).status_code for _ in range(2)] == [201, 201]
        over = api.upload(token, episode(5))
        assert over.status_code == 503 and over.headers["Retry-After"] == "5"
        assert "backlog" in over.json()["error"]
        assert api.upload(token, first).status_code == 200  # a retry is still answered
        assert len(stream) == 3
        stream.redis.xdel(stream.keys.stream, stream.entries()[0][0])  # one ingested
        assert api.upload(token, episode(5)).status_code == 201
        assert len(stream) == 3
    finally:
        api.close()
        stream.close()
