"""RunDir: naming, reopening, config history, atomic checkpoints and pruning."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from msagent.errors import ConfigError
from msagent.rundir import RunDir
from msagent.rundir.checkpoints import CheckpointStore, Skipped

NOW = datetime(2024, 5, 6, 7, 8, 9)


def _tensors(step: int) -> dict[str, np.ndarray]:
    return {"w": np.full((2, 3), step, dtype=np.float32), "n": np.array(step, dtype=np.int64)}


def test_create_names_by_time_and_never_reuses(tmp_path: Path) -> None:
    first = RunDir.create(tmp_path / "runs", "exp", now=NOW)
    second = RunDir.create(tmp_path / "runs", "exp", now=NOW)
    assert first.path.name == "exp-20240506-070809"
    assert second.path.name == "exp-20240506-070809-1"
    assert first.path.is_dir() and first.path.is_absolute()


def test_open_accepts_a_run_dir_and_refuses_others(tmp_path: Path) -> None:
    made = RunDir.create(tmp_path, "exp", now=NOW)
    assert RunDir.open(made.path).path == made.path
    with pytest.raises(ConfigError, match="not an msagent run directory"):
        RunDir.open(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        RunDir.open(tmp_path / "nope")


def test_write_config_keeps_a_different_earlier_config(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    run.write_config("a = 1\n")
    run.write_config("a = 1\n")
    run.write_config("a = 2\n")
    assert run.config_path.read_text() == "a = 2\n"
    assert (run.path / "config.1.toml").read_text() == "a = 1\n"
    assert not (run.path / "config.2.toml").exists()


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    assert run.latest_checkpoint() is None
    run.save_checkpoint(5, _tensors(5), {"env_steps": 1234, "version": 5, "lr": 2.5e-4})
    step, tensors, state = run.latest_checkpoint()
    assert step == 5 and state == {"env_steps": 1234, "version": 5, "lr": 2.5e-4}
    np.testing.assert_array_equal(tensors["w"], _tensors(5)["w"])
    assert tensors["n"].dtype == np.int64 and tensors["n"].shape == ()


def test_crash_leftovers_are_ignored(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    run.save_checkpoint(10, _tensors(10), {"step": 10})
    folder = run.checkpoint_dir
    (folder / ".ckpt-000000020.safetensors.abc.tmp").write_bytes(b"half a file")
    (folder / "ckpt-000000030.safetensors").write_bytes((folder / "ckpt-000000010.safetensors")
                                                         .read_bytes())  # json never written
    (folder / "ckpt-000000040.json").write_text("{}")  # tensors missing
    assert run.checkpoint_steps() == [10]
    assert run.latest_checkpoint().step == 10


def test_unreadable_latest_falls_back_to_the_previous(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    run.save_checkpoint(1, _tensors(1), {"step": 1})
    run.save_checkpoint(2, _tensors(2), {"step": 2})
    (run.checkpoint_dir / "ckpt-000000002.safetensors").write_bytes(b"garbage")
    assert run.latest_checkpoint().state == {"step": 1}


def test_save_removes_temp_leftovers(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    run.checkpoint_dir.mkdir()
    leftover = run.checkpoint_dir / ".ckpt-000000001.json.x.tmp"
    leftover.write_text("partial")
    run.save_checkpoint(1, _tensors(1), {})
    assert not leftover.exists()


def test_keeps_the_last_three_checkpoints(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    for step in (100, 200, 300, 400, 500):
        run.save_checkpoint(step, _tensors(step), {"step": step})
    assert run.checkpoint_steps() == [300, 400, 500]
    names = sorted(p.name for p in run.checkpoint_dir.iterdir())
    assert len(names) == 6 and names[0] == "ckpt-000000300.json"
    assert run.latest_checkpoint().state == {"step": 500}


def test_state_must_be_plain_json(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    run.save_checkpoint(1, {}, {"x": np.float32(1.5), "n": np.int64(3)})
    assert run.latest_checkpoint().state == {"x": 1.5, "n": 3}
    with pytest.raises(TypeError, match="JSON takes"):
        run.save_checkpoint(2, {}, {"obj": object()})
    assert run.checkpoint_steps() == [1]


def test_checkpoint_json_is_readable_by_plain_json(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "exp", now=NOW)
    path = run.save_checkpoint(7, {}, {"versions": {"main": 3}})
    assert json.loads(path.read_text()) == {"versions": {"main": 3}}
    assert path.name == "ckpt-000000007.json"


LEARNER_KEYS = ("skeleton", "counters")


def _store_with(tmp_path: Path, *states: object) -> CheckpointStore:
    """A store holding one checkpoint per state (steps 1, 2, ...), the JSON written as given."""
    store = CheckpointStore(tmp_path / "ckpt", keep=5, required_keys=LEARNER_KEYS)
    for step, state in enumerate(states, start=1):
        store.save(step, _tensors(step), {})
        store.path(step, ".json").write_text(json.dumps(state))
    return store


def test_checkpoint_lacking_required_keys_is_skipped_and_reported(tmp_path: Path) -> None:
    good = {"skeleton": {}, "counters": {"updates": 1}}
    store = _store_with(tmp_path, good, {})
    assert store.latest().state == good
    assert store.skipped == [Skipped(store.path(2, ".json"),
                                     "the JSON state lacks the key(s) 'skeleton', 'counters'")]


def test_state_that_is_not_an_object_is_skipped(tmp_path: Path) -> None:
    store = _store_with(tmp_path, [1, 2])
    found, skipped = store.latest_with_report()
    assert found is None and store.steps() == [1]  # files exist, none usable
    assert [str(s) for s in skipped] == [
        f"{store.path(1, '.json')}: the JSON state is a list, not an object"]


def test_required_keys_per_call_override_the_store(tmp_path: Path) -> None:
    store = _store_with(tmp_path, {"skeleton": {}})
    assert store.latest() is None
    assert store.skipped[0].reason == "the JSON state lacks the key(s) 'counters'"
    assert store.latest(required_keys=()).state == {"skeleton": {}} and store.skipped == []


def test_unreadable_files_are_named_with_the_reason(tmp_path: Path) -> None:
    good = {"skeleton": {}, "counters": {}}
    store = _store_with(tmp_path, good, good, good)
    store.path(3, ".json").write_text("{not json")
    store.path(2, ".safetensors").write_bytes(b"garbage")
    assert store.latest().step == 1
    assert [s.path.name for s in store.skipped] == ["ckpt-000000003.json",
                                                    "ckpt-000000002.safetensors"]
    assert store.skipped[0].reason.startswith("unreadable JSON: ")
    assert store.skipped[1].reason.startswith("unreadable tensors: ")


def test_no_checkpoint_at_all_is_told_apart_from_none_usable(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "empty", required_keys=LEARNER_KEYS)
    assert store.latest() is None and store.steps() == [] and store.skipped == []


def test_skips_are_logged_as_warnings_naming_the_file(tmp_path: Path, caplog) -> None:
    store = _store_with(tmp_path, {})
    with caplog.at_level("WARNING", logger="msagent.rundir.checkpoints"):
        store.latest()
    assert caplog.messages == [f"skipping checkpoint {store.path(1, '.json')}: the JSON state "
                               "lacks the key(s) 'skeleton', 'counters'"]
