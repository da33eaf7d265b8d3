"""Model downloads (manifest and bytes with ETags, 304s, corrupt files refused) and the
GatewayClient: model cache, retries of 429/503/connection errors, clear errors on 4xx."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
import uvicorn

from msagent.client import GatewayClient, GatewayError
from msagent.client import http as client_http
from msagent.gateway.app import build_app
from msagent.gateway.serve import listening_socket
from msagent.gateway.tokens import TokenStore
from msagent.exporting.model_store import ModelStore
from tests.gateway.conftest import Api, Stream, bearer

INFO = {
    "opset": 15,
    "inputs": [{"name": "obs", "shape": ["batch", 4], "dtype": "float32"}],
    "outputs": [{"name": "logits", "shape": ["batch", 2], "dtype": "float32"},
                {"name": "value", "shape": ["batch"], "dtype": "float32"}],
    "action": {"n": 2}, "source": {"policy": "main"},
}


@pytest.fixture
def models(cfg) -> ModelStore:
    """The model store the default config's gateway serves."""
    return ModelStore(cfg.path(cfg.gateway.models, "models"))


def test_manifest_and_bytes_with_etags(api: Api, tokens: dict, models: ModelStore):
    auth = bearer(tokens["reader"])
    none = api.request("GET", "/v1/games/cartpole/model", headers=auth)
    assert none.status_code == 404 and "no model" in none.json()["error"]
    v1 = models.publish("cartpole", b"onnx one", INFO)
    got = api.request("GET", "/v1/games/cartpole/model", headers=auth)
    assert got.status_code == 200 and got.json()["version"] == 1
    assert got.json()["sha256"] == v1.sha256 == hashlib.sha256(b"onnx one").hexdigest()
    assert got.headers["ETag"] == f'"{v1.sha256}"'
    same = api.request("GET", "/v1/games/cartpole/model",
                       headers={**auth, "If-None-Match": got.headers["ETag"]})
    assert same.status_code == 304 and same.content == b""
    models.publish("cartpole", b"onnx two", INFO)
    newer = api.request("GET", "/v1/games/cartpole/model",
                        headers={**auth, "If-None-Match": got.headers["ETag"]})
    assert newer.status_code == 200 and newer.json()["version"] == 2
    data = api.request("GET", "/v1/games/cartpole/models/1", headers=auth)
    assert data.status_code == 200 and data.content == b"onnx one"
    assert data.headers["content-type"] == "application/octet-stream"
    assert data.headers["ETag"] == f'"{v1.sha256}"'
    cached = api.request("GET", "/v1/games/cartpole/models/1",
                         headers={**auth, "If-None-Match": f'W/"{v1.sha256}", "other"'})
    assert cached.status_code == 304
    for version in (3, 0, -1):
        missing = api.request("GET", f"/v1/games/cartpole/models/{version}", headers=auth)
        assert missing.status_code == 404, missing.text


def test_a_corrupt_model_is_not_served(api: Api, tokens: dict, models: ModelStore):
    models.publish("cartpole", b"the real model", INFO)
    path = Path(models.root) / "cartpole" / "v000001" / "model.onnx"
    path.write_bytes(b"tampered")
    response = api.request("GET", "/v1/games/cartpole/models/1",
                           headers=bearer(tokens["reader"]))
    assert response.status_code == 500
    assert "corrupt" in response.json()["error"] and str(path) not in response.text


@pytest.fixture
def live(cfg, tokens, redis_url) -> Iterator[str]:
    """The default config's gateway on a real loopback port (uvicorn in a thread)."""
    sock = listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(build_app(cfg, redis_url), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.01)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    thread.join(10)
    sock.close()


def test_client_downloads_once_and_follows_new_versions(live: str, tokens: dict,
                                                        models: ModelStore, tmp_path: Path,
                                                        monkeypatch):
    reads = []
    original = ModelStore.read
    monkeypatch.setattr(ModelStore, "read",
                        lambda self, g, v: reads.append(v) or original(self, g, v))
    cache = tmp_path / "cache"
    with GatewayClient(live, tokens["reader"]) as client:
        assert client.latest_manifest("cartpole") is None
        with pytest.raises(GatewayError) as nothing:
            client.download_model("cartpole", cache)
        assert nothing.value.status == 404
        models.publish("cartpole", b"version one", INFO)
        manifest, path = client.download_model("cartpole", cache)
        assert manifest["version"] == 1 and path.read_bytes() == b"version one"
        assert client.download_model("cartpole", cache) == (manifest, path)
        assert reads == [1]  # the second call got 304 and used the cache
        models.publish("cartpole", b"version two", INFO)
        manifest2, path2 = client.download_model("cartpole", cache)
        assert manifest2["version"] == 2 and path2.read_bytes() == b"version two"
        path2.write_bytes(b"bit rot")
        assert client.download_model("cartpole", cache)[1].read_bytes() == b"version two"
        assert reads == [1, 2, 2]  # a damaged cache file is downloaded again
        with pytest.raises(GatewayError) as unknown:
            client.latest_manifest("chess")
        assert unknown.value.status == 404 and "unknown game" in str(unknown.value)


def test_client_uploads_over_http(live: str, tokens: dict, stream: Stream):
    with GatewayClient(live, tokens["bob"], client_version="game/2.1") as client:
        answer = client.upload_episode("cartpole", np.zeros((7, 4), np.float32),
                                       np.ones(7, np.int64), np.ones(7, np.float32), False,
                                       True, log_probs=np.full(7, -0.7, np.float32),
                                       model_version=4, episode_id="e1", part=2)
        assert answer["status"] == "stored"
        again = client.upload_episode("cartpole", np.zeros((7, 4), np.float32),
                                      np.ones(7, np.int64), np.ones(7, np.float32), False,
                                      True, episode_id="e1", part=2)
        assert again == {"status": "duplicate", "entry": answer["entry"]}
        with pytest.raises(GatewayError) as bad:
            client.upload_episode("cartpole", np.zeros((7, 3), np.float32),
                                  np.ones(7, np.int64), np.ones(7, np.float32), True, False)
        assert bad.value.status == 422 and "observations" in bad.value.reason
    assert len(stream) == 1


def _mocked(handler, monkeypatch, **kwargs) -> tuple[GatewayClient, list[float]]:
    """A client whose HTTP goes to ``handler``; the delays it slept instead of sleeping."""
    slept: list[float] = []
    monkeypatch.setattr(client_http.time, "sleep", slept.append)
    client = GatewayClient("http://gw", "msa_x", **kwargs)
    client._http = httpx.Client(base_url="http://gw", transport=httpx.MockTransport(handler))
    return client, slept


def _upload(client: GatewayClient) -> dict:
    return client.upload_episode("g", np.zeros((2, 4), np.float32), np.zeros(2, np.int64),
                                 np.zeros(2, np.float32), True, False, episode_id="same")


def test_client_retries_429_503_and_connection_errors(monkeypatch):
    answers = iter([httpx.ConnectError("refused"),
                    httpx.Response(429, json={"error": "slow"}, headers={"Retry-After": "3"}),
                    httpx.Response(503, json={"error": "down"}),
                    httpx.Response(201, json={"status": "stored", "entry": "1-0"})])
    ids = []

    def handler(request: httpx.Request) -> httpx.Response:
        import msgpack

        ids.append(msgpack.unpackb(request.content)["episode_id"])
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client, slept = _mocked(handler, monkeypatch, backoff_s=0.1)
    assert _upload(client) == {"status": "stored", "entry": "1-0"}
    assert ids == ["same"] * 4  # the same idempotency key every time
    assert slept[1] == 3.0  # Retry-After honoured
    assert 0.05 <= slept[0] <= 0.1 and 0.2 <= slept[2] <= 0.4  # jittered exponential backoff


def test_client_gives_up_with_clear_errors(monkeypatch):
    client, slept = _mocked(lambda r: httpx.Response(422, json={"error": "rewards: bad"}),
                            monkeypatch)
    with pytest.raises(GatewayError) as refused:
        _upload(client)
    assert refused.value.status == 422 and refused.value.reason == "rewards: bad"
    assert slept == []  # a 4xx other than 429 is not retried
    client, slept = _mocked(lambda r: httpx.Response(503, json={"error": "down"}),
                            monkeypatch, max_retries=3)
    with pytest.raises(GatewayError) as down:
        _upload(client)
    assert down.value.status == 503 and len(slept) == 3

    def unreachable(request):
        raise httpx.ConnectError("refused")

    client, slept = _mocked(unreachable, monkeypatch, max_retries=2)
    with pytest.raises(GatewayError) as gone:
        _upload(client)
    assert gone.value.status == 0 and "ConnectError" in gone.value.reason


def test_client_refuses_a_model_whose_bytes_do_not_match(monkeypatch, tmp_path: Path):
    manifest = {"version": 1, "sha256": hashlib.sha256(b"good").hexdigest()}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/model"):
            return httpx.Response(200, json=manifest)
        return httpx.Response(200, content=b"evil")

    client, _ = _mocked(handler, monkeypatch)
    with pytest.raises(GatewayError, match="sha256"):
        client.download_model("g", tmp_path)
    assert not list(tmp_path.rglob("*.onnx"))
