"""The consumer's side of bounded decoding: whatever a stream entry holds (a declared shape
with a huge dimension, a non-finite part, more maps and lists than its game's uploads need,
an id with a trailing newline), :func:`checked_record` answers RecordError naming the
problem (the entry is dead-lettered), never another exception."""

from __future__ import annotations

import tracemalloc

import msgpack
import pytest
from experience_samples import CARTPOLE, DAY, SCHEMAS, cartpole
from test_ingest import as_upload

from msagent.experience.records import (MAX_ARRAY_ELEMENTS, EpisodeRecord, Provenance,
                                        RecordError, decode_array)
from msagent.experience.stream_entry import checked_record, upload_entry

HUGE_SHAPES = [[0, 2**62], [2**62, 0], [0] * 7 + [2**62], [0, MAX_ARRAY_ELEMENTS + 1]]


@pytest.mark.parametrize("shape", HUGE_SHAPES, ids=str)
def test_decode_array_refuses_any_dimension_past_the_element_cap(shape: list[int]):
    with pytest.raises(RecordError, match=r"^observations: shape"):
        decode_array({"dtype": "<f4", "shape": shape, "data": b""}, "observations")
    capped = {"dtype": "<f4", "shape": [0, MAX_ARRAY_ELEMENTS], "data": b""}
    assert decode_array(capped, "observations").shape == (0, MAX_ARRAY_ELEMENTS)


@pytest.mark.parametrize("shape", HUGE_SHAPES, ids=str)
def test_the_consumer_refuses_a_huge_dimension_as_a_record_error(shape: list[int]):
    observations = {"dtype": "<f4", "shape": shape, "data": b""}
    with pytest.raises(RecordError, match="observations: shape"):
        checked_record(as_upload(cartpole(1), observations=observations), SCHEMAS)
    record = msgpack.unpackb(cartpole(1).to_msgpack())
    packed = msgpack.packb({**record, "observations": observations}, use_bin_type=True)
    with pytest.raises(RecordError, match="observations: shape"):
        checked_record(packed, SCHEMAS)


@pytest.mark.parametrize("part", [float("inf"), float("-inf")])
def test_a_record_with_a_part_that_is_no_integer_is_a_record_error(part: float):
    record = {**msgpack.unpackb(cartpole(1).to_msgpack()), "part": part}
    with pytest.raises(RecordError):
        checked_record(msgpack.packb(record, use_bin_type=True), SCHEMAS)


def test_the_consumer_refuses_more_maps_and_lists_than_the_game_needs():
    empty_maps = [[{}] * 500] * 100  # 50,101 containers; cartpole's uploads need 10,008
    with pytest.raises(RecordError, match="maps and lists"):
        checked_record(as_upload(cartpole(1), observations=empty_maps), SCHEMAS)
    nested = cartpole(2, steps=CARTPOLE.max_steps)  # the longest, as nested lists: accepted
    lists = as_upload(nested, observations=nested.observations.tolist(),
                      actions=nested.actions.tolist(), rewards=nested.rewards.tolist(),
                      log_probs=nested.log_probs.tolist())
    assert len(checked_record(lists, SCHEMAS)) == CARTPOLE.max_steps


def test_nested_list_headers_declaring_many_items_cost_the_consumer_no_memory():
    body = b"\x81" + msgpack.packb("observations") + b"\xdc\x0b\xb8" * 1000  # 3,000 each
    entry = upload_entry("cartpole", Provenance("c0", DAY), body)
    tracemalloc.start()
    try:
        with pytest.raises(RecordError, match="not valid msgpack"):
            checked_record(entry, SCHEMAS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"peak {peak / (1 << 20):.1f} MiB for a {len(body)}-byte body"


def test_an_episode_id_with_a_trailing_newline_is_refused():
    record = cartpole(1)
    with pytest.raises(RecordError, match="episode_id"):
        checked_record(as_upload(record, episode_id="a\n"), SCHEMAS)
    renamed = EpisodeRecord(**{**record.__dict__, "episode_id": "a\n"})
    with pytest.raises(RecordError, match="episode_id"):
        checked_record(renamed.to_msgpack(), SCHEMAS)
