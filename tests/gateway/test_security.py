"""Hand-written hostile requests: each gets the right 4xx with a JSON reason naming the
problem, and none of them puts anything on the stream."""

from __future__ import annotations

import gzip
import json
import pickle
import time
from pathlib import Path

import msgpack
import numpy as np
import pytest

from msagent.experience.records import encode_array
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import Api, Stream, bearer, encode_body, episode

NAN32 = np.float32("nan")


def _packed(**fields) -> bytes:
    """A cartpole msgpack body with some fields replaced by ready-made (encoded) values."""
    body = {**episode(10), **fields}
    return msgpack.packb({k: encode_array(v) if isinstance(v, np.ndarray) else v
                          for k, v in body.items() if v is not _DROP}, use_bin_type=True)


def _json(**fields) -> bytes:
    body = {**episode(10), **fields}
    return json.dumps({k: v.tolist() if isinstance(v, np.ndarray) else v
                       for k, v in body.items() if v is not _DROP}).encode()


_DROP = object()
_OBS = episode(10)["observations"]

SCHEMA_CASES = {
    # field-level type and dtype problems
    "observations as big-endian floats": (_packed(observations={
        "dtype": ">f4", "shape": [10, 4], "data": _OBS.astype(">f4").tobytes()}),
        "observations: dtype"),
    "observations as strings": (_packed(observations={
        "dtype": "<U1", "shape": [10, 4], "data": b"a" * 160}), "observations: dtype"),
    "observations as a string": (_packed(observations="1,2,3"), "observations"),
    "float actions for a discrete game": (_packed(actions=np.zeros(10, np.float32)),
                                          "actions: expected integers"),
    "bool actions": (_packed(actions=np.ones(10, bool)), "actions: expected integers"),
    "bool actions in JSON": (_json(actions=[True] * 10), "actions: lists must"),
    "action out of range": (_packed(actions=np.full(10, 2)), "outside Discrete(2)"),
    "negative action": (_packed(actions=np.full(10, -1)), "outside Discrete(2)"),
    "bool part": (_packed(part=True), "part"),
    "bool model version": (_packed(model_version=False), "model_version"),
    "string terminated": (_packed(terminated="yes"), "terminated"),
    "int truncated": (_packed(truncated=1), "truncated"),
    "positive log-probs": (_packed(log_probs=np.full(10, 0.5, np.float32)), "log_probs"),
    # non-finite numbers in every float array
    "NaN observation": (_packed(observations=np.where(np.eye(10, 4) > 0, NAN32, _OBS)),
                        "observations: holds NaN"),
    "inf reward": (_packed(rewards=np.full(10, np.inf, np.float32)), "rewards: holds NaN"),
    "NaN log-prob": (_packed(log_probs=np.full(10, NAN32)), "log_probs: holds NaN"),
    "float64 beyond float32": (_packed(rewards=np.full(10, 1e300)), "rewards: holds NaN"),
    "JSON 1e400 reward": (_json(rewards=[1.0] * 9 + [1e400]).replace(b"Infinity", b"1e400"),
                          "rewards: holds NaN"),
    # shapes and lengths
    "huge declared shape": (_packed(observations={"dtype": "<f4", "shape": [2**40, 4],
                                                  "data": b""}), "declares"),
    "negative shape": (_packed(rewards={"dtype": "<f4", "shape": [-10], "data": b""}),
                       "rewards: shape"),
    "bytes do not match the shape": (_packed(rewards={"dtype": "<f4", "shape": [10],
                                                      "data": b"\0" * 39}), "needs 40 bytes"),
    "extra keys in an array map": (_packed(rewards={**encode_array(np.zeros(10, np.float32)),
                                                    "x": 1}), "exactly dtype, shape and data"),
    "ragged JSON observations": (_json(observations=[[0.0] * 4] * 9 + [[0.0] * 3]),
                                 "observations"),
    "observations of another length": (_packed(observations=np.zeros((9, 4), np.float32)),
                                       "observations: expected shape [10, 4]"),
    "zero steps": (_packed(observations=np.zeros((0, 4), np.float32),
                           actions=np.zeros(0, np.int64), rewards=np.zeros(0, np.float32),
                           log_probs=_DROP), "rewards: expected shape"),
    "more steps than max_steps": (_packed(observations=np.zeros((501, 4), np.float32),
                                          actions=np.zeros(501, np.int64),
                                          rewards=np.zeros(501, np.float32), log_probs=_DROP),
                                  "1 <= T <= 500"),
    # structure
    "top-level list": (msgpack.packb([1, 2, 3]), "must be a map"),
    "unknown field": (_packed(reward_scale=2.0), "unknown fields ['reward_scale']"),
    "missing rewards": (_packed(rewards=_DROP), "missing field 'rewards'"),
    "missing episode id": (_packed(episode_id=_DROP), "episode_id"),
    "episode id with a slash": (_packed(episode_id="../../etc"), "episode_id"),
    "episode id too long": (_packed(episode_id="a" * 129), "episode_id"),
    "integer episode id": (_packed(episode_id=12), "episode_id"),
    "client version too long": (_packed(client_version="v" * 65), "client_version"),
    "client version with a newline": (_packed(client_version="a\nb"), "client_version"),
    # numpy would make booleans beside numbers 0 and 1
    "a boolean among JSON actions": (_json(actions=[0, 1, True, 0, 1, 0, 1, 0, 1, 0]),
                                     "actions: lists must"),
    "a boolean among JSON rewards": (_json(rewards=[1.0] * 9 + [True]), "rewards: lists must"),
    "booleans as JSON observations": (_json(observations=[[True, False, True, False]] * 10),
                                      "observations: lists must"),
}


@pytest.mark.parametrize("name", list(SCHEMA_CASES))
def test_schema_violations_are_422_naming_the_field(api: Api, tokens: dict, stream: Stream,
                                                    name: str):
    data, expected = SCHEMA_CASES[name]
    fmt = "json" if "JSON" in name else "msgpack"
    response = api.upload(tokens["alice"], data, fmt=fmt)
    assert response.status_code == 422, response.text
    assert expected in response.json()["error"]
    assert len(stream) == 0


def test_uint8_observations_out_of_range_are_refused(api: Api, tokens: dict, stream: Stream):
    body = episode(5, game="pixels")
    body["observations"] = body["observations"].astype(np.int64) + 256
    response = api.upload(tokens["alice"], body, game="pixels", fmt="json")
    assert response.status_code == 422 and "0..255" in response.json()["error"]
    assert len(stream) == 0


def test_every_float_array_refuses_non_finite_values(api: Api, tokens: dict, stream: Stream):
    for field in ("observations", "actions", "rewards", "log_probs"):
        for bad in (np.nan, np.inf, -np.inf):
            body = episode(5, game="reacher")
            body[field] = body[field].copy()
            body[field].reshape(-1)[2] = bad
            response = api.upload(tokens["alice"], body, game="reacher")
            assert response.status_code == 422, (field, bad, response.text)
            assert response.json()["error"].startswith(f"{field}: holds NaN")
    assert len(stream) == 0


DECODE_CASES = {
    "truncated msgpack": (encode_body(episode(10))[:-7], {}, 400, "not valid msgpack"),
    "msgpack extension type": (msgpack.packb({"episode_id": msgpack.ExtType(5, b"x")}), {},
                               400, "not valid msgpack"),
    "msgpack integer keys": (msgpack.packb({1: 2}), {}, 400, "not valid msgpack"),
    "msgpack with trailing bytes": (encode_body(episode(3)) + b"\x01", {}, 400, "msgpack"),
    "deeply nested msgpack": (b"\x91" * 100_000 + b"\x01", {}, 400, "msgpack"),
    "empty body": (b"", {}, 400, "msgpack"),
    "invalid JSON": (b'{"episode_id": ', {"Content-Type": "application/json"}, 400, "JSON"),
    "JSON NaN literal": (_json(rewards=[1.0] * 10).replace(b"1.0]", b"NaN]"),
                         {"Content-Type": "application/json"}, 400, "JSON"),
    "deeply nested JSON": (b"[" * 100_000 + b"]" * 100_000,  # refused before parsing
                           {"Content-Type": "application/json"}, 413, "maps and lists"),
    "JSON integer of 5000 digits": (b'{"part": ' + b"9" * 5000 + b"}",
                                    {"Content-Type": "application/json"}, 400, "JSON"),
    "invalid UTF-8 in JSON": (b'{"episode_id": "\xff"}', {"Content-Type": "application/json"},
                              400, "JSON"),
    "JSON in UTF-16": (encode_body(episode(3), "json").decode().encode("utf-16"),
                       {"Content-Type": "application/json"}, 400, "JSON"),
    "JSON in UTF-32, no BOM": (encode_body(episode(3), "json").decode().encode("utf-32-le"),
                               {"Content-Type": "application/json"}, 400, "JSON"),
    "not gzip": (encode_body(episode(3)), {"Content-Encoding": "gzip"}, 400, "gzip"),
    "truncated gzip": (gzip.compress(encode_body(episode(30)))[:-20],
                       {"Content-Encoding": "gzip"}, 400, "gzip"),
    "bytes after the gzip stream": (gzip.compress(b"\x80") + b"junk",
                                    {"Content-Encoding": "gzip"}, 400, "gzip"),
    "superscript Content-Length": (b"\x80", {"Content-Length": "\u00b2".encode("latin-1")},
                                   400, "Content-Length"),
    "negative Content-Length": (b"\x80", {"Content-Length": "-1"}, 400, "Content-Length"),
    "text/plain": (b"{}", {"Content-Type": "text/plain"}, 415, "Content-Type"),
    "no Content-Type": (b"{}", {"Content-Type": ""}, 415, "Content-Type"),
    "pickle": (pickle.dumps({"a": 1}), {"Content-Type": "application/python-pickle"}, 415,
               "Content-Type"),
    "brotli": (b"\x80", {"Content-Encoding": "br"}, 415, "Content-Encoding"),
}


@pytest.mark.parametrize("name", list(DECODE_CASES))
def test_undecodable_bodies_are_refused(api: Api, tokens: dict, stream: Stream, name: str):
    data, headers, status, expected = DECODE_CASES[name]
    response = api.upload(tokens["alice"], data, headers=headers)
    assert response.status_code == status, response.text
    assert expected in response.json()["error"]
    assert len(stream) == 0


class _Exploit:
    """Unpickling this would create a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_pickles_are_never_unpickled(api: Api, tokens: dict, tmp_path: Path, stream: Stream):
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Exploit(marker))
    for content_type in ("application/msgpack", "application/json", "application/octet-stream",
                         "application/x-python-pickle"):
        response = api.upload(tokens["alice"], payload, headers={"Content-Type": content_type})
        assert 400 <= response.status_code < 500
    assert not marker.exists()
    assert len(stream) == 0


def test_tokens_are_checked_before_anything_else(api: Api, tokens: dict, cfg, stream: Stream):
    store = TokenStore.of_data_dir(cfg.data_dir)
    revoked = store.create("mallory", ["upload"], games=["cartpole"])[1]
    store.revoke("mallory")
    ten_days_ago = TokenStore(store.path, clock=lambda: time.time() - 10 * 86400)
    expired = ten_days_ago.create("old", ["upload"], expires_days=1, games=["cartpole"])[1]
    body = encode_body(episode(5))
    path = "/v1/games/cartpole/episodes"
    cases = [({}, 401), ({"Authorization": "Basic YWxpY2U6cHc="}, 401),
             ({"Authorization": "Bearer "}, 401), (bearer("msa_not-a-token"), 401),
             (bearer(revoked), 401), (bearer(expired), 401), (bearer(tokens["reader"]), 403),
             (bearer(tokens["ops"]), 403)]
    for headers, status in cases:
        response = api.request("POST", path, content=body,
                               headers={"Content-Type": "application/msgpack", **headers})
        assert response.status_code == status, (headers, response.text)
        assert set(response.json()) == {"error"}
        if status == 401:
            assert response.headers["WWW-Authenticate"] == "Bearer"
    unknown_game = api.request("POST", "/v1/games/chess/episodes", content=body,
                               headers={"Content-Type": "application/msgpack"})
    assert unknown_game.status_code == 401  # no hint which games exist without a token
    assert len(stream) == 0


def test_scopes_of_every_route(api: Api, tokens: dict):
    routes = {("GET", "/v1/games"): "download", ("GET", "/v1/games/cartpole/model"): "download",
              ("GET", "/v1/games/cartpole/models/1"): "download",
              ("GET", "/v1/admin/stats"): "admin"}
    scopes = {"alice": {"upload", "download", "admin"}, "bob": {"upload"},
              "reader": {"download"}, "ops": {"admin"}}
    for (method, path), scope in routes.items():
        assert api.request(method, path).status_code == 401
        for client, token in tokens.items():
            status = api.request(method, path, headers=bearer(token)).status_code
            if scope in scopes[client]:
                assert status in (200, 404), (path, client, status)  # 404: no model yet
            else:
                assert status == 403, (path, client, status)


def test_unknown_game_route_and_method(api: Api, tokens: dict):
    response = api.upload(tokens["alice"], episode(5), game="chess")
    assert response.status_code == 404 and response.json() == {"error": "unknown game"}
    for method, path, status in [("GET", "/nope", 404), ("GET", "/v1/games/x/episodes", 405),
                                 ("GET", "/v1/games/cartpole/models/abc", 422),
                                 ("GET", "/v1/games/chess/model", 404)]:
        response = api.request(method, path, headers=bearer(tokens["alice"]))
        assert response.status_code == status, (path, response.text)
        assert set(response.json()) == {"error"}


def test_a_bug_is_a_generic_500_without_traceback(api: Api, tokens: dict, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals at /work/main/msagent/x.py")

    monkeypatch.setattr(api.app.state.gateway.producer, "add", broken)
    response = api.upload(tokens["alice"], episode(5))
    assert response.status_code == 500
    assert response.json() == {"error": "internal error"}
