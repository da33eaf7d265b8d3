"""A record that makes the consumer fail in a way nobody foresaw (a crafted array shape, a
check or value scan raising something other than RecordError, a store refusing it) goes to
the dead-letter stream with the reason; the consumer keeps running and stores the records
around it (a real Ingestor over a real Redis)."""

from __future__ import annotations

import logging

import msgpack
import pytest
import redis
from experience_samples import SCHEMAS, cartpole, new_keys, wait_until
from test_ingest import as_upload, running

from msagent.experience.ingest import Ingestor
from msagent.experience.records import EpisodeRecord
from msagent.experience.schema import GameSchema
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_keys import ENTRY_FIELD, REASON_FIELD, RECORD_FIELD


class BrittleSchema(GameSchema):
    """Cartpole, with a check and a value scan that fail unexpectedly on some episodes."""

    def check(self, record: EpisodeRecord, scan_values: bool = True) -> EpisodeRecord:
        """ValueError for the episode ``check-bug`` (a bug, not a refusal)."""
        if record.episode_id == "check-bug":
            raise ValueError("the check tripped over itself")
        return super().check(record, scan_values)

    def value_errors(self, records: list[EpisodeRecord]) -> dict[int, str]:
        """TypeError whenever the episode ``scan-bug`` is among the records scanned."""
        if any(r.episode_id == "scan-bug" for r in records):
            raise TypeError("the scan tripped over itself")
        return super().value_errors(records)


def crafted_shape() -> bytes:
    """An upload whose observations declare the shape [0, 2**62] (zero elements, no bytes)."""
    observations = {"dtype": "<f4", "shape": [0, 2**62], "data": b""}
    return as_upload(cartpole(90), observations=observations)


def named(i: int, episode_id: str) -> bytes:
    """A valid cartpole record under another episode id."""
    return EpisodeRecord(**{**cartpole(i).__dict__, "episode_id": episode_id}).to_msgpack()


def dead_reasons(client: redis.Redis, dead: str) -> dict[bytes, str]:
    """The dead-letter stream's reasons by the entry id they came from."""
    return {f[ENTRY_FIELD]: f[REASON_FIELD].decode() for _, f in client.xrange(dead)}


def test_unexpected_errors_of_one_record_dead_letter_it_and_the_rest_are_stored(
        redis_url: str, tmp_path, caplog: pytest.LogCaptureFixture):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = ExperienceStore(str(tmp_path / "exp"))
    schemas = {**SCHEMAS, "cartpole": BrittleSchema(name="cartpole", obs_shape=(4,),
                                                     action_n=2)}
    bad = {"crafted": crafted_shape(), "check": named(91, "check-bug"),
           "scan": named(92, "scan-bug")}
    ids = {}
    for i in range(12):
        client.xadd(keys.stream, {RECORD_FIELD: cartpole(i).to_msgpack()})
        if i % 4 == 1:
            what = list(bad)[i // 4]
            ids[what] = client.xadd(keys.stream, {RECORD_FIELD: bad[what]})
    ingestor = Ingestor(redis_url, keys, store, schemas, batch=50, flush_s=0.2,
                        claim_idle_ms=300, progress_s=0.0)
    caplog.set_level(logging.WARNING, "msagent.experience.ingest")
    with running(ingestor):
        wait_until(lambda: client.xlen(keys.stream) == 0, 20, "the stream to drain")
        client.xadd(keys.stream, {RECORD_FIELD: cartpole(12).to_msgpack()})  # still running
        wait_until(lambda: store.count("cartpole") == 13, 20, "the record after them stored")
    reasons = dead_reasons(client, keys.dead)
    assert set(reasons) == set(ids.values())
    assert "ValueError: the check tripped over itself" in reasons[ids["check"]]
    assert "TypeError: the scan tripped over itself" in reasons[ids["scan"]]
    crafted = reasons[ids["crafted"]]  # a RecordError once decode_array checks such shapes
    assert "observations" in crafted or crafted.startswith("unexpected error: ValueError")
    assert ingestor.stats.refused == 3 and ingestor.stats.stored == 13
    assert sorted(r.episode_id for r in store.episodes("cartpole")) == sorted(
        f"ep-{i}" for i in range(13))
    assert caplog.text.count("the check tripped over itself") >= 1


class PickyStore(ExperienceStore):
    """A store whose writes fail (not retryably) whenever the episode ``poison`` is in them."""

    def write(self, records: list[EpisodeRecord]) -> list[str]:
        """ValueError for a batch holding ``poison``; else the real write."""
        if any(r.episode_id == "poison" for r in records):
            raise ValueError("the store cannot take this one")
        return super().write(records)


def test_a_record_the_store_refuses_is_dead_lettered_and_the_batch_stored(
        redis_url: str, tmp_path):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    store = PickyStore(str(tmp_path / "exp"))
    for i in range(10):
        client.xadd(keys.stream, {RECORD_FIELD: cartpole(i).to_msgpack()})
    poison = client.xadd(keys.stream, {RECORD_FIELD: named(50, "poison")})
    ingestor = Ingestor(redis_url, keys, store, SCHEMAS, batch=50, flush_s=0.2,
                        claim_idle_ms=300, progress_s=0.0)
    with running(ingestor):
        wait_until(lambda: client.xlen(keys.stream) == 0, 20, "the stream to drain")
        client.xadd(keys.stream, {RECORD_FIELD: cartpole(10).to_msgpack()})  # still running
        wait_until(lambda: store.count("cartpole") == 11, 20, "the record after it stored")
    reasons = dead_reasons(client, keys.dead)
    assert list(reasons) == [poison]
    assert "ValueError: the store cannot take this one" in reasons[poison]
    assert sorted(r.episode_id for r in store.episodes("cartpole")) == sorted(
        f"ep-{i}" for i in range(11))
    assert ingestor.stats.refused == 1 and ingestor.stats.stored == 11
    assert msgpack.unpackb(client.xrange(keys.dead)[0][1][RECORD_FIELD])["episode_id"] == "poison"
