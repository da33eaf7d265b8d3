"""The model store: versions in order, latest last, checksums verified, no version reused."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from pathlib import Path

import pytest

from msagent.exporting.model_store import (
    Manifest,
    ModelIntegrityError,
    ModelStore,
    ModelStoreError,
)

INFO = {
    "opset": 15,
    "inputs": [{"name": "obs", "shape": ["batch", 4], "dtype": "float32"}],
    "outputs": [{"name": "logits", "shape": ["batch", 2], "dtype": "float32"},
                {"name": "value", "shape": ["batch"], "dtype": "float32"}],
    "action": {"n": 2},
    "source": {"run_dir": "runs/x", "policy": "main", "param_version": 3},
}


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ModelStore:
    """A fresh store on a local folder, and one on fsspec's in-memory filesystem."""
    if request.param == "local":
        return ModelStore(tmp_path / "models")
    return ModelStore(f"memory://models-{uuid.uuid4().hex}")


def test_publish_two_versions_latest_is_the_second(store: ModelStore) -> None:
    assert store.latest("cartpole") is None and store.versions("cartpole") == []
    first = store.publish("cartpole", b"model one", INFO)
    second = store.publish("cartpole", b"model two!", INFO)
    assert (first.version, second.version) == (1, 2)
    assert store.versions("cartpole") == [1, 2]
    assert store.latest("cartpole") == second
    assert store.manifest("cartpole", 1) == first
    assert store.read("cartpole", 1) == b"model one"
    assert store.read("cartpole", 2) == b"model two!"
    assert second.sha256 == hashlib.sha256(b"model two!").hexdigest()
    assert second.size == len(b"model two!") and second.format == "onnx"
    assert second.source["param_version"] == 3 and second.action == {"n": 2}
    assert second.inputs[0].shape == ["batch", 4]
    assert store.manifest("cartpole", 3) is None


def test_games_are_separate(store: ModelStore) -> None:
    store.publish("a", b"x", INFO)
    assert store.publish("b", b"y", INFO).version == 1
    assert store.latest("a").sha256 != store.latest("b").sha256
    assert store.games() == ["a", "b"]


def test_corrupt_model_file_is_refused_with_a_clear_error(store: ModelStore) -> None:
    store.publish("g", b"the real model", INFO)
    path = f"{store.root}/g/v000001/model.onnx"
    store.fs.pipe_file(path, b"the REAL model")  # same size, different bytes
    with pytest.raises(ModelIntegrityError, match="corrupt: sha256"):
        store.read("g", 1)
    store.fs.rm(path)
    with pytest.raises(ModelIntegrityError, match="missing"):
        store.read("g", 1)
    with pytest.raises(ModelStoreError, match="no version 7"):
        store.read("g", 7)


def test_concurrent_publishers_get_distinct_versions(store: ModelStore) -> None:
    got: list[int] = []
    errors: list[BaseException] = []

    def publish(i: int) -> None:
        try:
            got.append(store.publish("race", f"model {i}".encode(), INFO).version)
        except BaseException as exc:  # noqa: BLE001 - reported by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(got) == list(range(1, 13))
    assert store.versions("race") == list(range(1, 13))
    assert store.latest("race").version == 12
    for v in got:  # each version holds the bytes its manifest describes
        store.read("race", v)


def test_two_store_objects_on_one_folder_share_versions(tmp_path: Path) -> None:
    one, two = ModelStore(tmp_path), ModelStore(str(tmp_path))
    assert one.publish("g", b"1", INFO).version == 1
    assert two.publish("g", b"2", INFO).version == 2
    assert one.latest("g").version == 2


def test_a_claimed_but_unfinished_version_is_skipped_not_reused(store: ModelStore) -> None:
    store.fs.makedirs(f"{store.root}/g/v000001", exist_ok=True)
    store.fs.pipe_file(f"{store.root}/g/v000001/.claim", b"{}")  # a publisher that died
    assert store.versions("g") == [] and store.latest("g") is None
    assert store.publish("g", b"m", INFO).version == 2
    assert store.versions("g") == [2]


def test_latest_json_is_the_newest_manifest_on_disk(tmp_path: Path) -> None:
    store = ModelStore(tmp_path)
    store.publish("g", b"1", INFO)
    store.publish("g", b"2", INFO)
    latest = json.loads((tmp_path / "g" / "latest.json").read_text())
    assert latest["version"] == 2
    assert (tmp_path / "g" / "v000002" / "model.onnx").read_bytes() == b"2"
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize("game", ["../escape", "a/b", "", ".hidden", "x" * 65, "a b", None])
def test_bad_game_names_are_refused(store: ModelStore, game: object) -> None:
    with pytest.raises(ModelStoreError, match="bad game name"):
        store.publish(game, b"m", INFO)  # type: ignore[arg-type]
    with pytest.raises(ModelStoreError, match="bad game name"):
        store.latest(game)  # type: ignore[arg-type]


def test_bad_versions_and_info_are_refused(store: ModelStore) -> None:
    with pytest.raises(ModelStoreError, match="bad version"):
        store.manifest("g", 0)
    with pytest.raises(ValueError, match="exactly one"):
        store.publish("g", b"m", {**INFO, "action": {"n": 2, "shape": [1]}})
    assert store.publish("g", b"m", INFO).version == 1  # a refused manifest burned no version


def test_manifest_round_trips_through_json() -> None:
    m = Manifest(game="g", version=1, sha256="0" * 64, size=1, created_at=1.0, **INFO)
    assert Manifest.model_validate_json(m.to_json()) == m
