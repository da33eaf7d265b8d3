"""Fuzzing the upload route with 10,500 generated requests (hypothesis, derandomized):
mutations of valid episodes, JSON structures near the schema, and random bytes under random
content types and encodings.

Whatever arrives: no 5xx, every answer is JSON without a traceback or a file path, a refusal
is exactly ``{"error": ...}``, an unmutated episode is stored, and the stream holds exactly
one entry per 201, each of which decodes and passes the game's schema again.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import msagent
from msagent.experience.records import ALLOWED_DTYPES, EpisodeRecord, Provenance, encode_array
from msagent.experience.schema import UPLOAD_FIELDS
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import GAMES, Api, Stream, episode, make_config

SETTINGS = dict(deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
MUTATED, NEAR_SCHEMA, RANDOM_BYTES = 4500, 3000, 3000
CONTENT_TYPES = ["application/msgpack", "application/x-msgpack", "application/json",
                 "application/json; charset=utf-8", "text/plain", "application/octet-stream",
                 "application/x-www-form-urlencoded", "", "application/msgpack; x=1"]
LEAKS = ("Traceback", 'File "', "site-packages", str(Path(msagent.__file__).parents[1]))
"""What an answer must never contain (generated strings are too short to hold any of it)."""
FIELDS = sorted(UPLOAD_FIELDS)
ARRAYS = ["observations", "actions", "rewards", "log_probs"]


class Fuzz:
    """One app, its token and its stream, and what the generated requests got."""

    def __init__(self, api: Api, token: str, stream: Stream) -> None:
        self.api, self.token, self.stream = api, token, stream
        self.statuses: Counter[int] = Counter()

    def send(self, game: str, content: bytes, headers: dict[str, str]) -> int:
        """POST and check the answer's invariants; the status."""
        response = self.api.request("POST", f"/v1/games/{game}/episodes", content=content,
                                    headers={"Authorization": f"Bearer {self.token}",
                                             **headers})
        status, text = response.status_code, response.text
        assert status < 500, text
        assert not any(leak in text for leak in LEAKS), text
        answer = json.loads(text)
        if status >= 400:
            assert set(answer) == {"error"} and isinstance(answer["error"], str), text
        else:
            assert answer["status"] == ("stored" if status == 201 else "duplicate"), text
        self.statuses[status] += 1
        return status

    def check_stream(self) -> None:
        """One entry per 201; each a record that passes its game's schema again."""
        records = self.stream.records()  # each decoded and checked as the consumer does
        assert len(records) == self.statuses[201]
        schemas = self.api.app.state.gateway.schemas
        for record in records:
            again = schemas[record.game].validate_upload(_body_of(record), record.provenance)
            assert again.observations.dtype == record.observations.dtype
            np.testing.assert_array_equal(again.observations, record.observations)
            np.testing.assert_array_equal(again.actions, record.actions)
            assert record.provenance.client_id == "fuzzer"


def _body_of(record: EpisodeRecord) -> dict[str, Any]:
    """The upload body a stored record would come from."""
    p: Provenance = record.provenance
    return {"episode_id": record.episode_id, "part": record.part,
            "client_version": p.client_version, "model_version": p.model_version,
            "observations": encode_array(record.observations),
            "actions": encode_array(record.actions), "rewards": encode_array(record.rewards),
            "log_probs": None if record.log_probs is None else encode_array(record.log_probs),
            "terminated": record.terminated, "truncated": record.truncated}


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[Fuzz]:
    """A module-wide app without rate limits."""
    cfg = make_config(tmp_path_factory.mktemp("fuzz"), rate_per_s=1e9, burst=10**9)
    token = TokenStore.of_data_dir(cfg.data_dir).create("fuzzer", ["upload"], all_games=True)[1]
    api, stream = Api(cfg, redis_url), Stream(cfg, redis_url)
    yield Fuzz(api, token, stream)
    api.close()
    stream.close()


# ---------------------------------------------------------------------------------- values

ints = st.integers(-(2**63), 2**64 - 1)
scalars = st.one_of(st.none(), st.booleans(), ints, st.floats(), st.text(max_size=12),
                    st.binary(max_size=12))
shapes = st.lists(st.one_of(st.integers(-3, 12), st.integers(0, 2**40), st.booleans(),
                            st.floats(0, 5)), max_size=9)
array_maps = st.fixed_dictionaries(
    {"dtype": st.sampled_from([*ALLOWED_DTYPES, ">f4", "<U1", "|O", "<c8", "<f2", "bogus"]),
     "shape": shapes, "data": st.binary(max_size=96)},
    optional={"extra": scalars})
values = st.recursive(scalars | array_maps,
                      lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                      max_leaves=12)


@st.composite
def mutations(draw: st.DrawFn) -> tuple[str, str, Any]:
    """One change to a valid body: drop, replace or add a field, or damage an array."""
    kind = draw(st.sampled_from(["drop", "set", "add", "dtype", "shape", "data", "cast",
                                 "poison"]))
    field = draw(st.sampled_from(ARRAYS if kind in ("dtype", "shape", "data", "cast",
                                                     "poison") else FIELDS))
    if kind == "add":
        return kind, draw(st.text(max_size=8).filter(lambda k: k not in UPLOAD_FIELDS)), \
            draw(values)
    arg = {"drop": st.none(), "set": values, "dtype": array_maps.map(lambda m: m["dtype"]),
           "shape": shapes, "data": st.integers(-8, 8),
           "cast": st.sampled_from(["<f8", "<i8", "<i4", "|u1", "|b1", "<f4"]),
           "poison": st.sampled_from([np.nan, np.inf, -np.inf, 1e39, 256, -1, 2])}[kind]
    return kind, field, draw(arg)


def _mutate(body: dict[str, Any], change: tuple[str, str, Any]) -> None:
    """Apply one mutation in place (arrays are numpy or dtype/shape/data maps here)."""
    kind, field, arg = change
    if kind == "drop":
        body.pop(field, None)
    elif kind in ("set", "add"):
        body[field] = arg
    elif isinstance(body.get(field), np.ndarray):
        array = body[field]
        if kind == "cast":
            with np.errstate(invalid="ignore", over="ignore"):
                body[field] = array.astype(arg)
        elif kind == "poison":
            poisoned = array.astype(np.float64)
            poisoned.reshape(-1)[0] = arg
            body[field] = poisoned
        else:
            encoded = encode_array(array)
            if kind == "data":
                encoded["data"] = encoded["data"][:arg] if arg < 0 else \
                    encoded["data"] + bytes(arg)
            else:
                encoded[kind] = arg
            body[field] = encoded


def _jsonable(value: Any) -> Any:
    """Plain JSON values (numpy arrays as lists, bytes as text)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _encode(body: dict[str, Any], fmt: str) -> bytes:
    """msgpack (arrays as maps) or JSON (arrays as lists; NaN/Infinity literals allowed)."""
    if fmt == "json":
        return json.dumps(_jsonable(body)).encode()
    return msgpack.packb({k: encode_array(v) if isinstance(v, np.ndarray) else v
                          for k, v in body.items()}, use_bin_type=True)


# ---------------------------------------------------------------------------------- tests

@pytest.mark.slow
def test_mutated_episodes(fuzz: Fuzz) -> None:
    @settings(max_examples=MUTATED, **SETTINGS)
    @given(game=st.sampled_from([g["name"] for g in GAMES]), steps=st.integers(1, 4),
           seed=st.integers(0, 2**16), changes=st.lists(mutations(), max_size=3),
           fmt=st.sampled_from(["msgpack", "json"]), gzipped=st.booleans(),
           id_=st.text("abc", min_size=1, max_size=6))
    def run(game, steps, seed, changes, fmt, gzipped, id_):
        body = episode(steps, game=game, seed=seed, episode_id=f"{id_}-{seed}")
        for change in changes:
            _mutate(body, change)
        content = _encode(body, fmt)
        headers = {"Content-Type": f"application/{fmt}"}
        if gzipped:
            content, headers["Content-Encoding"] = gzip.compress(content, 1), "gzip"
        status = fuzz.send(game, content, headers)
        if not changes:
            assert status in (200, 201)

    run()
    fuzz.check_stream()
    assert fuzz.statuses[201] > 500 and fuzz.statuses[422] > 1000, fuzz.statuses


@pytest.mark.slow
def test_structures_near_the_schema(fuzz: Fuzz) -> None:
    good = {g["name"]: _jsonable(episode(2, game=g["name"])) for g in GAMES}

    @settings(max_examples=NEAR_SCHEMA, **SETTINGS)
    @given(game=st.sampled_from(list(good)),
           picked=st.dictionaries(st.sampled_from(FIELDS + ["extra", ""]), values,
                                  max_size=6),
           keep=st.lists(st.sampled_from(FIELDS), unique=True),
           fmt=st.sampled_from(["json", "msgpack"]))
    def run(game, picked, keep, fmt):
        body = {k: v for k, v in good[game].items() if k in keep}
        body.update(picked)
        content = json.dumps(_jsonable(body)).encode() if fmt == "json" else \
            msgpack.packb(body, use_bin_type=True)
        fuzz.send(game, content, {"Content-Type": f"application/{fmt}"})

    before = fuzz.statuses.copy()
    run()
    fuzz.check_stream()
    assert (fuzz.statuses - before)[422] > NEAR_SCHEMA // 2


@pytest.mark.slow
def test_random_bytes_and_headers(fuzz: Fuzz) -> None:
    valid = _encode(episode(3), "msgpack")

    @settings(max_examples=RANDOM_BYTES, **SETTINGS)
    @given(data=st.one_of(st.binary(max_size=300),
                          st.integers(0, len(valid)).map(lambda n: valid[:n]),
                          st.binary(max_size=40).map(lambda b: gzip.compress(b))),
           content_type=st.sampled_from(CONTENT_TYPES),
           encoding=st.sampled_from([None, "gzip", "GZIP", "deflate", "identity", ""]),
           game=st.sampled_from(["cartpole", "pixels", "chess", "x" * 65]))
    def run(data, content_type, encoding, game):
        headers = {"Content-Type": content_type}
        if encoding is not None:
            headers["Content-Encoding"] = encoding
        fuzz.send(game, data, headers)

    before = fuzz.statuses.copy()
    run()
    fuzz.check_stream()
    seen = fuzz.statuses - before
    assert seen[400] and seen[404] and seen[415] and seen[422], seen
