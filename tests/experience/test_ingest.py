"""The ingestion consumer in a thread against a real Redis: good records reach the store and
leave the stream; refused ones reach the dead-letter stream with their reason and entry id;
entries a dead consumer left pending are claimed; a Redis restart loses nothing buffered."""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import msgpack
import numpy as np
import pyarrow.parquet as pq
import pytest
import redis
from experience_samples import (CARTPOLE, DAY, SCHEMAS, assert_same, cartpole, new_keys,
                                pixels, wait_until)

from msagent.experience.ingest import Ingestor
from msagent.experience.records import EpisodeRecord, RecordError, encode_array
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_entry import UPLOAD_FORMAT, upload_entry
from msagent.experience.stream_keys import (CONSUMER_GROUP, ENTRY_FIELD, REASON_FIELD,
                                            RECORD_FIELD, StreamKeys)
from tests.redis_server import _answers_ping, _free_loopback_port


@contextmanager
def running(ingestor: Ingestor) -> Iterator[threading.Event]:
    """The ingestor's run() in a thread, stopped (and joined) on exit."""
    stop = threading.Event()
    thread = threading.Thread(target=ingestor.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(timeout=20)
        assert not thread.is_alive(), "the ingestor did not stop"


def pending(client: redis.Redis, keys: StreamKeys) -> int:
    """Entries delivered to some consumer and not acknowledged."""
    return client.xpending(keys.stream, CONSUMER_GROUP)["pending"]


def with_reward(record: EpisodeRecord, value: float) -> bytes:
    """The record's bytes with one reward replaced (the schema refuses non-finite numbers)."""
    record.rewards = record.rewards.copy()
    record.rewards[0] = value
    return record.to_msgpack()


def test_good_records_are_stored_and_bad_ones_dead_lettered(
        redis_url: str, tmp_path, caplog: pytest.LogCaptureFixture):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    good = [cartpole(i) for i in range(30)] + [pixels(i) for i in range(4)]
    bad = {b"not msgpack at all": "not valid msgpack",
           msgpack.packb({"format": "nope"}): "is not a msagent-episode/1 or msagent-upload/1 map",
           cartpole(90, obs_dim=3).to_msgpack(): "observations: expected shape [7, 4]",
           with_reward(cartpole(91), float("nan")): "rewards: holds NaN",
           EpisodeRecord(**{**cartpole(92).__dict__, "game": "chess"}).to_msgpack():
               "unknown game 'chess'"}
    bad_ids = {}
    for i, record in enumerate(good):
        client.xadd(keys.stream, {RECORD_FIELD: record.to_msgpack()})
        if i % 7 == 0 and bad:
            data, reason = bad.popitem()
            bad_ids[client.xadd(keys.stream, {RECORD_FIELD: data})] = reason
    bad_ids[client.xadd(keys.stream, {b"other": b"x"})] = "entry has no 'r' field"
    assert not bad
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=8, flush_s=0.2,
                        claim_idle_ms=5000, progress_s=0.0)
    caplog.set_level(logging.INFO, "msagent.experience.ingest")
    with running(ingestor):
        wait_until(lambda: client.xlen(keys.stream) == 0, 20, "the stream to drain")
    assert store.count("cartpole") == 30 and store.count("pixels") == 4
    for got, want in zip(store.episodes("cartpole") + store.episodes("pixels"), good):
        assert_same(got, want)
    dead = client.xrange(keys.dead)
    assert len(dead) == len(bad_ids) == 6 and ingestor.stats.refused == 6
    for _, fields in dead:
        assert bad_ids[fields[ENTRY_FIELD]] in fields[REASON_FIELD].decode()
    assert pending(client, keys) == 0 and ingestor.stats.stored == 34
    assert "34 records stored" in caplog.text and f"lag 0 entries in {keys.stream}" in caplog.text


def with_array(record: EpisodeRecord, name: str, index: tuple, value: float) -> EpisodeRecord:
    """The record with one value of one of its arrays replaced."""
    array = getattr(record, name).copy()
    array[index] = value
    return EpisodeRecord(**{**record.__dict__, name: array})


def test_bad_values_are_found_in_a_read_of_two_games_and_only_they_dead_lettered(
        redis_url: str, tmp_path):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    bad = {3: (with_array(cartpole(3), "observations", (2, 1), float("inf")),
               "game 'cartpole': observations: holds NaN or infinite"),
           5: (with_array(cartpole(5), "actions", (4,), 2),
               "game 'cartpole': actions: 2 is outside Discrete(2)"),
           8: (with_array(cartpole(8), "log_probs", (0,), 0.5),
               "game 'cartpole': log_probs: 0.5 is above 0"),
           10: (with_array(pixels(10), "actions", (1, 0), float("nan")),
                "game 'pixels': actions: holds NaN")}
    records = [bad[i][0] if i in bad else (pixels(i) if i % 4 == 2 else cartpole(i))
               for i in range(12)]
    ids = [client.xadd(keys.stream, {RECORD_FIELD: r.to_msgpack()}) for r in records]
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=50, flush_s=0.2,
                        claim_idle_ms=5000, progress_s=0.0)
    with running(ingestor):  # the twelve entries come in one read
        wait_until(lambda: client.xlen(keys.stream) == 0, 20, "the stream to drain")
    dead = {fields[ENTRY_FIELD]: fields[REASON_FIELD].decode()
            for _, fields in client.xrange(keys.dead)}
    assert set(dead) == {ids[i] for i in bad}
    for i, (_, reason) in bad.items():
        assert dead[ids[i]].startswith(reason), (dead[ids[i]], reason)
    stored = store.episodes("cartpole") + store.episodes("pixels")
    assert sorted(r.episode_id for r in stored) == sorted(
        r.episode_id for i, r in enumerate(records) if i not in bad)


def test_one_value_scan_of_a_batch_finds_what_one_per_record_finds():
    records = [CARTPOLE.check(cartpole(i), scan_values=False) for i in range(6)]
    assert CARTPOLE.value_errors(records) == {} and CARTPOLE.value_errors([]) == {}
    records[1] = with_array(records[1], "rewards", (3,), float("nan"))
    records[4] = with_array(records[4], "actions", (0,), -1)
    found = CARTPOLE.value_errors(records)
    assert set(found) == {1, 4}
    for i, reason in found.items():
        with pytest.raises(RecordError) as one:
            CARTPOLE.check(records[i])
        assert reason == str(one.value)
    with pytest.raises(RecordError, match="rewards: holds NaN"):
        CARTPOLE.check(records[1])  # scan_values=True by default: the gateway's check


def as_upload(record: EpisodeRecord, **changes: object) -> bytes:
    """The stream entry the gateway writes for a msgpack upload of ``record`` (its body as
    the client sent it, beside the gateway's provenance); ``changes`` alter the body."""
    p = record.provenance
    body = {"episode_id": record.episode_id, "part": record.part,
            "client_version": p.client_version, "model_version": p.model_version,
            "observations": encode_array(record.observations),
            "actions": encode_array(record.actions), "rewards": encode_array(record.rewards),
            "log_probs": None if record.log_probs is None else encode_array(record.log_probs),
            "terminated": record.terminated, "truncated": record.truncated, **changes}
    return upload_entry(record.game, p, msgpack.packb(body, use_bin_type=True))


def test_uploads_kept_as_sent_are_checked_and_stored_like_records(redis_url: str, tmp_path):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    good = [cartpole(i) for i in range(6)]
    for record in good:
        client.xadd(keys.stream, {RECORD_FIELD: as_upload(record)})
    head = {"format": UPLOAD_FORMAT, "game": "cartpole", "received_at": DAY}
    bad = {as_upload(cartpole(90), rewards=encode_array(np.ones(3, np.float32))):
               "game 'cartpole': observations: expected shape [3, 4]",
           msgpack.packb({**head, "client_id": "x", "body": b"\xc1"}):
               "the upload's body is not valid msgpack",
           msgpack.packb({**head, "body": msgpack.packb({})}): "lacks a client_id",
           msgpack.packb({**head, "game": ["chess"], "client_id": "x", "body": b""}):
               "unknown game ['chess']"}
    reasons = {client.xadd(keys.stream, {RECORD_FIELD: data}): why for data, why in bad.items()}
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=8, flush_s=0.2,
                        claim_idle_ms=5000, progress_s=0.0)
    with running(ingestor):
        wait_until(lambda: client.xlen(keys.stream) == 0, 20, "the stream to drain")
    for got, want in zip(store.episodes("cartpole"), good):
        assert_same(got, want)
    assert store.count("cartpole") == len(good)
    dead = {fields[ENTRY_FIELD]: fields[REASON_FIELD].decode()
            for _, fields in client.xrange(keys.dead)}
    assert set(dead) == set(reasons)
    for entry, why in reasons.items():
        assert why in dead[entry], (why, dead[entry])


@pytest.mark.slow
def test_entries_a_dead_consumer_left_pending_are_claimed(redis_url: str, tmp_path):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    records = [cartpole(i) for i in range(20)]
    for record in records:
        client.xadd(keys.stream, {RECORD_FIELD: record.to_msgpack()})
    client.xgroup_create(keys.stream, CONSUMER_GROUP, id="0")
    taken = client.xreadgroup(CONSUMER_GROUP, "ghost", {keys.stream: ">"}, count=12)
    assert len(taken[0][1]) == 12
    store.write(records[:5])  # the ghost wrote some of them, then died before acknowledging
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=50, flush_s=0.1,
                        claim_idle_ms=300)
    with running(ingestor):
        wait_until(lambda: store.count("cartpole") == 20, 20, "all records stored")
        wait_until(lambda: pending(client, keys) == 0, 20, "nothing pending")
    assert client.xlen(keys.stream) == 0
    assert [r.episode_id for r in store.episodes("cartpole")] == [r.episode_id for r in records]


def test_a_stop_flushes_the_buffer_before_the_flush_time(redis_url: str, tmp_path):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=1000, flush_s=60.0,
                        claim_idle_ms=120_000)
    with running(ingestor):
        for i in range(9):
            client.xadd(keys.stream, {RECORD_FIELD: cartpole(i).to_msgpack()})
        wait_until(lambda: pending(client, keys) == 9, 10, "the records read")
        assert store.count("cartpole") == 0  # buffered, not yet written
    assert store.count("cartpole") == 9 and pending(client, keys) == 0
    assert client.xlen(keys.stream) == 0


@pytest.mark.slow
def test_small_reads_still_fill_whole_files(redis_url: str, tmp_path,
                                           monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr("msagent.experience.ingest.READ_COUNT", 3)
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    for i in range(25):
        client.xadd(keys.stream, {RECORD_FIELD: cartpole(i, received_at=DAY).to_msgpack()})
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=10, flush_s=1.0,
                        claim_idle_ms=120_000)
    asked: list[int] = []
    read = ingestor.redis.xreadgroup
    ingestor.redis.xreadgroup = lambda *a, **kw: asked.append(kw["count"]) or read(*a, **kw)
    with running(ingestor):
        wait_until(lambda: store.count("cartpole") == 25, 20, "all records stored")
    assert asked and max(asked) == 3
    files = sorted((tmp_path / "exp").rglob("part-*.parquet"))
    assert sorted(pq.read_metadata(f).num_rows // 7 for f in files) == [5, 10, 10]


@contextmanager
def persistent_redis(workdir, port: int) -> Iterator[subprocess.Popen]:
    """A redis-server with an fsync-always append-only file on ``port``, killed on exit."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
         "yes", "--appendfsync", "always", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _answers_ping(port), 10, "redis-server to start")
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_a_redis_restart_loses_no_buffered_record(tmp_path, caplog: pytest.LogCaptureFixture):
    port, keys = _free_loopback_port(), new_keys()
    url = f"redis://127.0.0.1:{port}/0"
    store = ExperienceStore(str(tmp_path / "exp"))
    ingestor = Ingestor(url, keys, store, SCHEMAS, batch=1000, flush_s=3.0,
                        claim_idle_ms=60_000)
    caplog.set_level(logging.WARNING, "msagent.experience.ingest")
    with running(ingestor):
        with persistent_redis(tmp_path, port):
            client = redis.Redis.from_url(url)
            for i in range(15):
                client.xadd(keys.stream, {RECORD_FIELD: cartpole(i).to_msgpack()})
            wait_until(lambda: client.xinfo_groups(keys.stream), 10, "the consumer group")
            wait_until(lambda: pending(client, keys) == 15, 10, "the records read")
            caplog.clear()  # (it retried already: Redis started after it)
        wait_until(lambda: "retrying in" in caplog.text, 10, "a retry logged")
        assert f"Redis at redis://127.0.0.1:{port}/0 failed" in caplog.text
        with persistent_redis(tmp_path, port):  # the same append-only file: the same stream
            wait_until(lambda: client.xlen(keys.stream) == 0, 20, "the stream to drain")
            assert store.count("cartpole") == 15 and pending(client, keys) == 0
    assert np.array_equal(store.episodes("cartpole")[3].rewards, cartpole(3).rewards)
