"""Fixtures of the gateway tests: a config per test (its own key prefix on the session's real
Redis), tokens, the app called in-process (httpx over ASGI, streaming request bodies), and
episode bodies."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgpack
import numpy as np
import pytest
import redis

from msagent.config.gateway import GatewayConfig
from msagent.experience.records import EpisodeRecord, encode_array
from msagent.experience.stream_entry import checked_record
from msagent.experience.stream_keys import StreamKeys
from msagent.gateway.app import build_app
from msagent.gateway.tokens import TokenStore
from tests.redis_server import redis_url  # noqa: F401  (the session's real redis-server)

GAMES = [
    {"name": "cartpole", "obs_shape": [4], "action_n": 2, "max_steps": 500},
    {"name": "reacher", "obs_shape": [3], "action_shape": [2], "max_steps": 50},
    {"name": "pixels", "obs_shape": [2, 3], "obs_dtype": "uint8", "action_n": 3,
     "max_steps": 20},
]
"""Games every test config accepts: Discrete actions, Box actions, uint8 observations."""

MSGPACK = {"Content-Type": "application/msgpack"}
JSON_TYPE = {"Content-Type": "application/json"}


def make_config(folder: Path, **gateway: Any) -> GatewayConfig:
    """A gateway config with its data under ``folder`` and a key prefix of its own."""
    section = {"data_dir": str(folder / "data"), "prefix": f"test:{uuid.uuid4().hex[:12]}",
               "ingest": False, "games": GAMES, **gateway}
    return GatewayConfig.model_validate({"gateway": section, "base_dir": str(folder)})


class Api:
    """The gateway app called in-process from synchronous test code (one event loop)."""

    def __init__(self, cfg: GatewayConfig, redis_url: str) -> None:
        self.cfg = cfg
        self.app = build_app(cfg, redis_url)
        self.loop = asyncio.new_event_loop()
        transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
        self.client = httpx.AsyncClient(transport=transport, base_url="http://gateway")

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """One request, answered by the app."""
        return self.loop.run_until_complete(self.client.request(method, url, **kwargs))

    def upload(self, token: str, body: Any, game: str = "cartpole", fmt: str = "msgpack",
               headers: dict[str, str] | None = None) -> httpx.Response:
        """POST an episode body (a dict, encoded as ``fmt``; or bytes as they are)."""
        content = body if isinstance(body, bytes) else encode_body(body, fmt)
        sent = {**(MSGPACK if fmt == "msgpack" else JSON_TYPE), **bearer(token),
                **(headers or {})}
        return self.request("POST", f"/v1/games/{game}/episodes", content=content,
                            headers=sent)

    def close(self) -> None:
        """Close the client and the app's Redis connections."""
        self.loop.run_until_complete(self.client.aclose())
        self.loop.run_until_complete(self.app.state.gateway.redis.aclose())
        self.loop.close()


def bearer(token: str) -> dict[str, str]:
    """The Authorization header of a token."""
    return {"Authorization": f"Bearer {token}"}


def episode(steps: int = 200, game: str = "cartpole", seed: int = 0,
            **fields: Any) -> dict[str, Any]:
    """A valid upload body of ``game`` (arrays as numpy; encode with :func:`encode_body`)."""
    rng = np.random.default_rng(seed)
    spec = next(g for g in GAMES if g["name"] == game)
    if spec.get("obs_dtype") == "uint8":
        obs = rng.integers(0, 256, (steps, *spec["obs_shape"]), dtype=np.uint8)
    else:
        obs = rng.normal(size=(steps, *spec["obs_shape"])).astype(np.float32)
    if "action_n" in spec:
        actions = rng.integers(0, spec["action_n"], steps)
    else:
        actions = rng.uniform(-1, 1, (steps, *spec["action_shape"])).astype(np.float32)
    body = {"episode_id": uuid.uuid4().hex, "observations": obs, "actions": actions,
            "rewards": rng.normal(size=steps).astype(np.float32),
            "log_probs": -rng.uniform(0, 2, steps).astype(np.float32),
            "terminated": True, "truncated": False, "client_version": "test/1",
            "model_version": 3}
    body.update(fields)
    return body


def encode_body(body: dict[str, Any], fmt: str = "msgpack") -> bytes:
    """An upload body as msgpack (arrays as dtype/shape/data maps) or JSON (nested lists)."""
    if fmt == "msgpack":
        plain = {k: encode_array(v) if isinstance(v, np.ndarray) else v for k, v in body.items()}
        return msgpack.packb(plain, use_bin_type=True)
    plain = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in body.items()}
    return json.dumps(plain).encode()


@pytest.fixture
def config_factory(tmp_path: Path) -> Callable[..., GatewayConfig]:
    """Make a config (gateway options as keyword arguments) under the test's folder."""
    return lambda **gateway: make_config(tmp_path, **gateway)


@pytest.fixture
def cfg(tmp_path: Path) -> GatewayConfig:
    """The default test config (generous rate limits)."""
    return make_config(tmp_path, rate_per_s=1e6, burst=1_000_000)


@pytest.fixture
def tokens(cfg: GatewayConfig) -> dict[str, str]:
    """Tokens of the default config, for all its games: every scope, upload only, download
    only, admin only (tokens bound to games: ``test_token_games``)."""
    store = TokenStore.of_data_dir(cfg.data_dir)
    made = {"alice": ("upload", "download", "admin"), "bob": ("upload",),
            "reader": ("download",), "ops": ("admin",)}
    return {client: store.create(client, scopes, all_games=True)[1]
            for client, scopes in made.items()}


@pytest.fixture
def api(cfg: GatewayConfig, tokens: dict[str, str], redis_url: str) -> Iterator[Api]:
    """The default config's app, called in-process."""
    made = Api(cfg, redis_url)
    yield made
    made.close()


@pytest.fixture
def stream(cfg: GatewayConfig, redis_url: str) -> Iterator[Stream]:
    """The default config's stream, read directly from Redis."""
    reader = Stream(cfg, redis_url)
    yield reader
    reader.close()


class Stream:
    """Direct reads of one config's stream (and cleanup of its keys afterwards)."""

    def __init__(self, cfg: GatewayConfig, redis_url: str) -> None:
        self.keys = StreamKeys(cfg.gateway.prefix)
        self.schemas = cfg.schemas()
        self.redis = redis.Redis.from_url(redis_url)

    def entries(self) -> list[tuple[str, bytes]]:
        """Every entry: (id, record bytes)."""
        return [(i.decode(), f[b"r"]) for i, f in self.redis.xrange(self.keys.stream)]

    def records(self) -> list[EpisodeRecord]:
        """Every entry's record, checked against its game's schema as the consumer does."""
        return [checked_record(data, self.schemas) for _, data in self.entries()]

    def __len__(self) -> int:
        return int(self.redis.xlen(self.keys.stream))

    def close(self) -> None:
        """Delete this config's keys and disconnect."""
        for key in self.redis.scan_iter(f"{self.keys.prefix}:*"):
            self.redis.delete(key)
        self.redis.close()
