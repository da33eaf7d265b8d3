"""The experience store: records round-trip through Parquet on a folder and on fsspec's memory
filesystem, partitioned by game and UTC day; ``since``/``limit``; each record read once however
often it was written; files of another layout refused with a clear error."""

from __future__ import annotations

import uuid

import numpy as np
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from experience_samples import DAY, assert_same, cartpole, pixels

from msagent.experience.store import ExperienceStore, StoreError
from msagent.experience.steps_table import Layout, steps_table


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path) -> ExperienceStore:
    """An empty store on a local folder or on fsspec's in-memory filesystem."""
    if request.param == "local":
        return ExperienceStore(str(tmp_path / "exp"))
    return ExperienceStore(f"memory://exp-{uuid.uuid4().hex}")


def all_files(store: ExperienceStore) -> list[str]:
    """Every file under the store's root, hidden ones included."""
    selector = pafs.FileSelector(store.root, recursive=True, allow_not_found=True)
    return [i.path for i in store.fs.get_file_info(selector) if i.type == pafs.FileType.File]


def test_records_of_both_action_kinds_round_trip(store: ExperienceStore):
    discrete = [cartpole(i, steps=3 + i, logp=i % 2 == 0, model_version=None if i == 2 else i)
                for i in range(6)]
    images = [pixels(i) for i in range(3)]
    assert store.games() == [] and store.count("cartpole") == 0
    store.write(discrete[3:] + images)
    store.write(discrete[:3])
    got = store.episodes("cartpole")
    assert [r.episode_id for r in got] == [f"ep-{i}" for i in range(6)]  # by received_at
    for record, want in zip(got, discrete):
        assert_same(record, want)
    assert got[1].log_probs is None and got[2].provenance.model_version is None
    for record, want in zip(store.episodes("pixels"), images):
        assert_same(record, want)
    assert store.games() == ["cartpole", "pixels"] and store.count("pixels") == 3
    assert store.episodes("nope") == [] and store.count("nope") == 0


def test_files_are_partitioned_by_game_and_utc_day_with_no_temporary_left(
        store: ExperienceStore):
    written = store.write([cartpole(0), cartpole(1, received_at=DAY + 86_400), pixels(0)])
    assert len(written) == 3
    days = sorted(p.split(store.root)[1].rsplit("/", 1)[0] for p in all_files(store))
    assert days == ["/game=cartpole/date=2024-01-01", "/game=cartpole/date=2024-01-02",
                    "/game=pixels/date=2024-01-01"]
    assert sorted(all_files(store)) == sorted(written)  # nothing hidden left behind
    assert all(p.rsplit("/", 1)[1].startswith("part-") for p in written)
    meta = pq.read_schema(written[0], filesystem=store.fs).metadata
    assert meta[b"msagent.obs_shape"] == b"[4]"


def test_since_keeps_later_records_and_limit_the_oldest(store: ExperienceStore):
    store.write([cartpole(i, received_at=DAY + 40_000 * i) for i in range(6)])  # over 3 days
    later = store.episodes("cartpole", since=DAY + 80_002)
    assert [r.episode_id for r in later] == ["ep-2", "ep-3", "ep-4", "ep-5"]
    assert [r.episode_id for r in store.episodes("cartpole", since=DAY + 80_003)] == [
        "ep-3", "ep-4", "ep-5"]
    assert [r.episode_id for r in store.episodes("cartpole", limit=2)] == ["ep-0", "ep-1"]
    assert store.episodes("cartpole", since=DAY + 1e6) == []


def test_a_record_written_twice_is_read_once(store: ExperienceStore):
    records = [cartpole(i, steps=4) for i in range(5)]
    store.write(records)
    store.write(records[1:3])                     # a consumer died before acknowledging
    store.write([cartpole(1, 4, client="other")])  # same episode id, another client: distinct
    got = store.episodes("cartpole")
    assert store.count("cartpole") == 6 and len(got) == 6
    for record, want in zip([r for r in got if r.provenance.client_id == "c0"], records):
        assert_same(record, want)
    assert all(len(r) == 4 for r in got)


def test_two_parts_of_one_episode_are_two_records(store: ExperienceStore):
    first, second = cartpole(0, part=0), cartpole(0, part=1, received_at=DAY + 5)
    store.write([first, second])
    got = store.episodes("cartpole")
    assert [r.part for r in got] == [0, 1]
    assert_same(got[1], second)


def test_a_file_of_another_observation_shape_is_refused_clearly(store: ExperienceStore):
    store.write([cartpole(0)])
    store.write([cartpole(1, obs_dim=3)])
    with pytest.raises(StoreError, match=r"game 'cartpole' has files of different layouts"):
        store.episodes("cartpole")
    with pytest.raises(StoreError, match="different layouts"):
        store.count("cartpole")


def test_metadata_that_contradicts_the_columns_is_refused(store: ExperienceStore):
    table = steps_table([cartpole(0)])
    lying = Layout((5,), "float32", None).metadata()
    folder = f"{store.root}/game=cartpole/date=2024-01-01"
    store.fs.create_dir(folder, recursive=True)
    pq.write_table(table.replace_schema_metadata(lying), f"{folder}/part-x.parquet",
                   filesystem=store.fs)
    with pytest.raises(StoreError, match=r"column obs is .*shape \[5\]"):
        store.episodes("cartpole")


def test_records_of_one_game_with_different_shapes_cannot_share_a_write(
        store: ExperienceStore):
    with pytest.raises(StoreError, match="ep-1"):
        store.write([cartpole(0), cartpole(1, obs_dim=3)])
    assert all_files(store) == []


def test_the_store_reads_back_what_it_stores_in_bulk(store: ExperienceStore):
    records = [cartpole(i, steps=50, client=f"c{i % 3}") for i in range(200)]
    store.write(records[:120])
    store.write(records[100:])
    got = store.episodes("cartpole")
    assert len(got) == 200
    assert np.array_equal(np.concatenate([r.rewards for r in got]),
                          np.concatenate([r.rewards for r in records]))
