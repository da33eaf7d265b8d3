"""The upload route's happy paths: msgpack and JSON bodies land on the stream once per
(client, episode, part) with provenance; the info routes and the OpenAPI document."""

from __future__ import annotations

import gzip
import json
import time

import msgpack
import numpy as np
import pytest

from msagent.experience.records import RECORD_FORMAT, EpisodeRecord
from msagent.experience.schema import UPLOAD_FIELDS
from msagent.experience.stream_entry import UPLOAD_FORMAT
from msagent.gateway.producer import Added
from msagent.gateway.uploads import added_response
from tests.gateway.conftest import Api, Stream, bearer, encode_body, episode


def _only_record(stream: Stream) -> EpisodeRecord:
    (record,) = stream.records()
    return record


def test_msgpack_upload_is_stored_with_provenance(api: Api, tokens: dict, stream: Stream):
    body = episode(200, model_version=7)
    before = time.time()
    response = api.upload(tokens["alice"], body)
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "stored"
    record = _only_record(stream)
    assert response.json()["entry"] == stream.entries()[0][0]
    assert record.game == "cartpole" and record.episode_id == body["episode_id"]
    np.testing.assert_array_equal(record.observations, body["observations"])
    np.testing.assert_array_equal(record.actions, body["actions"])
    np.testing.assert_array_equal(record.rewards, body["rewards"])
    np.testing.assert_array_equal(record.log_probs, body["log_probs"])
    assert record.terminated and not record.truncated
    assert record.provenance.client_id == "alice"
    assert before <= record.provenance.received_at <= time.time()
    assert record.provenance.client_version == "test/1"
    assert record.provenance.model_version == 7
    entry = msgpack.unpackb(stream.entries()[0][1])  # the bytes as sent, not re-encoded
    assert entry["format"] == UPLOAD_FORMAT and entry["body"] == encode_body(body)


def test_json_upload_is_stored(api: Api, tokens: dict, stream: Stream):
    body = episode(30, game="reacher", log_probs=None, model_version=None)
    response = api.upload(tokens["bob"], body, game="reacher", fmt="json")
    assert response.status_code == 201, response.text
    assert msgpack.unpackb(stream.entries()[0][1])["format"] == RECORD_FORMAT  # the checked
    record = _only_record(stream)
    assert record.game == "reacher" and record.provenance.client_id == "bob"
    np.testing.assert_allclose(record.observations, body["observations"], rtol=1e-6)
    np.testing.assert_allclose(record.actions, body["actions"], rtol=1e-6)
    assert record.log_probs is None and record.provenance.model_version is None


def test_gzipped_upload_is_stored(api: Api, tokens: dict, stream: Stream):
    body = episode(50)
    response = api.upload(tokens["alice"], gzip.compress(encode_body(body)),
                          headers={"Content-Encoding": "gzip"})
    assert response.status_code == 201, response.text
    assert _only_record(stream).episode_id == body["episode_id"]


def test_a_retry_is_a_duplicate_and_stored_once(api: Api, tokens: dict, stream: Stream):
    body = episode(20)
    first = api.upload(tokens["alice"], body)
    again = api.upload(tokens["alice"], body)
    as_json = api.upload(tokens["alice"], body, fmt="json")
    assert first.status_code == 201
    assert first.json() == {"status": "stored", "entry": stream.entries()[0][0]}
    assert first.headers["content-type"] == "application/json"
    assert again.status_code == 200 and as_json.status_code == 200
    assert again.json() == {"status": "duplicate", "entry": first.json()["entry"]}
    assert as_json.json()["entry"] == first.json()["entry"]
    assert len(stream) == 1


def test_other_clients_parts_and_games_are_stored_apart(api: Api, tokens: dict,
                                                        stream: Stream):
    body = episode(20, episode_id="same-id")
    assert api.upload(tokens["alice"], body).status_code == 201
    assert api.upload(tokens["bob"], body).status_code == 201
    assert api.upload(tokens["alice"], {**body, "part": 1}).status_code == 201
    other_game = episode(5, game="pixels", episode_id="same-id")
    assert api.upload(tokens["alice"], other_game, game="pixels").status_code == 201
    assert api.upload(tokens["bob"], body).status_code == 200
    records = stream.records()
    assert [(r.game, r.provenance.client_id, r.part) for r in records] == [
        ("cartpole", "alice", 0), ("cartpole", "bob", 0), ("cartpole", "alice", 1),
        ("pixels", "alice", 0)]


def test_games_route_lists_the_schemas(api: Api, tokens: dict):
    response = api.request("GET", "/v1/games", headers=bearer(tokens["reader"]))
    assert response.status_code == 200
    games = {g["name"]: g for g in response.json()["games"]}
    assert set(games) == {"cartpole", "reacher", "pixels"}
    assert games["cartpole"]["obs_shape"] == [4] and games["cartpole"]["action_n"] == 2
    assert games["pixels"]["obs_dtype"] == "uint8"


def test_health_and_admin_stats(api: Api, tokens: dict, stream: Stream):
    assert api.request("GET", "/healthz").json() == {"redis": "ok"}
    for _ in range(3):
        assert api.upload(tokens["alice"], episode(10)).status_code == 201
    stream.redis.xadd(stream.keys.dead, {"reason": "test"})
    stream.redis.xreadgroup("ingest", "c1", {stream.keys.stream: ">"}, count=2)
    stats = api.request("GET", "/v1/admin/stats", headers=bearer(tokens["ops"])).json()
    assert stats["stream_length"] == 3
    assert stats["pending"] == 2
    assert stats["dead_letters"] == 1


def test_consumer_group_starts_at_the_first_record(api: Api, tokens: dict, stream: Stream):
    assert api.upload(tokens["alice"], episode(10)).status_code == 201
    got = stream.redis.xreadgroup("ingest", "late-consumer", {stream.keys.stream: ">"})
    assert len(got[0][1]) == 1  # the record written before any consumer ran is delivered


def test_openapi_documents_the_upload_body_and_bearer_auth(api: Api):
    doc = api.request("GET", "/openapi.json").json()
    upload = doc["paths"]["/v1/games/{game}/episodes"]["post"]
    content = upload["requestBody"]["content"]
    assert {"application/msgpack", "application/json"} <= set(content)
    assert set(content["application/json"]["schema"]["properties"]) == UPLOAD_FIELDS
    assert upload["security"] == [{"bearer": []}]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert api.request("GET", "/docs").status_code == 404  # off unless [gateway] docs


@pytest.mark.parametrize("entry", ["1764200000000-0", 'x"}, "status": "forged', "\u00e9-1"])
def test_the_upload_answer_is_valid_json_whatever_the_entry(entry: str):
    for duplicate in (False, True):
        answer = added_response(Added(entry, duplicate))
        assert answer.status_code == (200 if duplicate else 201)
        assert json.loads(answer.body) == {"status": "duplicate" if duplicate else "stored",
                                           "entry": entry}


def test_a_raw_box_action_beyond_the_game_s_bounds_is_kept_as_sent(api: Api, tokens: dict,
                                                                   stream: Stream):
    # a client uploads the raw Gaussian sample its log-probability belongs to (clipping is for
    # the game), so a Box action is checked for shape and finite values, not bounds
    body = episode(20, game="reacher", actions=np.full((20, 2), 5.0, np.float32))
    response = api.upload(tokens["alice"], body, game="reacher")
    assert response.status_code == 201, response.text
    np.testing.assert_array_equal(_only_record(stream).actions, body["actions"])
    nan = episode(20, game="reacher", actions=np.full((20, 2), np.nan, np.float32))
    refused = api.upload(tokens["alice"], nan, game="reacher")
    assert refused.status_code == 422 and "actions" in refused.json()["error"]
