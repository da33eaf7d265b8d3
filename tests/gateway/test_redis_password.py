"""``[gateway] redis_url`` with its password as a ``${VAR}`` placeholder: the gateway and the
ingestion consumer expand it when they connect to a real password-protected Redis."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest

from msagent.experience.ingest_cli import build_ingestor
from msagent.experience.store import ExperienceStore
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import Api, episode, make_config
from tests.redis_server import protected_redis


def test_the_gateway_and_consumer_take_the_redis_password_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    password = uuid.uuid4().hex
    monkeypatch.setenv("MSAGENT_TEST_GATEWAY_REDIS_PASSWORD", password)
    with protected_redis(tmp_path / "redis", password) as port:
        url = f"redis://:${{MSAGENT_TEST_GATEWAY_REDIS_PASSWORD}}@127.0.0.1:{port}/0"
        cfg = make_config(tmp_path, redis_url=url, rate_per_s=1e6, burst=1_000_000,
                          ingest_flush_s=0.1)
        token = TokenStore.of_data_dir(cfg.data_dir).create("alice", ["upload"],
                                                             games=["cartpole"])[1]
        api = Api(cfg, cfg.gateway.redis_url)
        try:
            assert api.upload(token, episode(steps=5)).status_code == 201
        finally:
            api.close()
        ingestor, stop = build_ingestor(cfg, cfg.gateway.redis_url, "test"), threading.Event()
        thread = threading.Thread(target=ingestor.run, args=(stop,), daemon=True)
        thread.start()
        store = ExperienceStore(cfg.path(cfg.gateway.store, "experience"))
        try:
            for _ in range(200):
                if store.count("cartpole") == 1:
                    break
                stop.wait(0.05)
        finally:
            stop.set()
            thread.join(20)
        assert store.count("cartpole") == 1
