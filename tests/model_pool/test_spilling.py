"""The in-memory store's budget for frozen snapshots: what stays in memory, what goes to files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from msagent.config.services import ModelPoolSection
from msagent.model_pool import MemoryStore, ModelPool, SpillingMemoryStore, make_store
from msagent.model_pool.stores.spilling import SPILL_SUFFIX
from msagent.vocabulary import ModelKey

FLOATS = 1000
"""Floats per snapshot: 4,000 bytes of weights, plus the safetensors header."""


def weights(seed: int) -> dict[str, np.ndarray]:
    """Distinct weights per seed, so a mixed-up file would show."""
    return {"w": np.random.default_rng(seed).normal(size=FLOATS).astype(np.float32),
            "b": np.full(3, seed, np.int64)}


def frozen_pool(tmp_path: Path, snapshots: int, budget_snapshots: int) -> tuple[ModelPool, int]:
    """A pool whose store holds ``budget_snapshots`` frozen snapshots in memory, with
    ``snapshots`` frozen ones pushed; and the size of one."""
    probe = ModelPool(MemoryStore())
    size = len(probe.store.get(probe.push("p", weights(0))).weights)
    store = SpillingMemoryStore(tmp_path / "spill", max_bytes=budget_snapshots * size)
    pool = ModelPool(store, keep_last=2)
    for seed in range(snapshots):
        pool.push("main", weights(seed), {"frozen": True, "seed": seed})
    return pool, size


def test_frozen_snapshots_beyond_the_budget_live_in_files_and_pull_exactly(tmp_path) -> None:
    """Memory holds the budget; the rest are files; every snapshot pulls bit for bit."""
    pool, size = frozen_pool(tmp_path, snapshots=10, budget_snapshots=3)
    store = pool.store
    assert store.memory_bytes() == 3 * size and store.spilled() == 7
    assert len(list((tmp_path / "spill").glob(f"*{SPILL_SUFFIX}"))) == 7
    for seed in range(10):
        snap = pool.pull(ModelKey("main", seed + 1))
        np.testing.assert_array_equal(snap.weights["w"], weights(seed)["w"])
        np.testing.assert_array_equal(snap.weights["b"], weights(seed)["b"])
        assert snap.metadata == {"seed": seed, "frozen": True}
    assert pool.list("main") == [ModelKey("main", v) for v in range(1, 11)]


def test_the_least_recently_used_snapshot_is_spilled_first(tmp_path) -> None:
    """A snapshot pulled lately stays in memory when a new one arrives."""
    pool, _ = frozen_pool(tmp_path, snapshots=3, budget_snapshots=3)
    pool.pull(ModelKey("main", 1))  # now 2 is the least recently used
    pool.push("main", weights(3), {"frozen": True})
    files = {p.name for p in (tmp_path / "spill").glob(f"*{SPILL_SUFFIX}")}
    assert files == {f"{b'main'.hex()}@2{SPILL_SUFFIX}"}


def test_snapshots_that_are_not_frozen_never_spill_until_frozen(tmp_path) -> None:
    """Pruning bounds the unfrozen ones; freezing one makes it count against the budget."""
    pool, size = frozen_pool(tmp_path, snapshots=1, budget_snapshots=1)
    for seed in range(1, 5):
        pool.push("main", weights(seed))
    assert pool.store.spilled() == 0 and pool.store.memory_bytes() == size
    pool.freeze(ModelKey("main", 5))
    assert pool.store.spilled() == 1 and pool.store.memory_bytes() == size
    np.testing.assert_array_equal(pool.pull(ModelKey("main", 1)).weights["w"], weights(0)["w"])
    assert pool.list("main") == [ModelKey("main", v) for v in (1, 4, 5)]  # keep_last=2


def test_a_snapshot_larger_than_the_budget_stays_in_memory_alone(tmp_path) -> None:
    """The newest frozen snapshot is never spilled, even over the budget."""
    pool, size = frozen_pool(tmp_path, snapshots=2, budget_snapshots=0)
    assert pool.store.memory_bytes() == size and pool.store.spilled() == 1


def test_a_new_store_clears_stale_spill_files_and_nothing_else(tmp_path) -> None:
    """Files a dead pool left are stale (its memory is gone); other files are not its own."""
    frozen_pool(tmp_path, snapshots=4, budget_snapshots=1)
    mine = tmp_path / "spill" / "notes.txt"
    mine.write_text("keep me")
    (tmp_path / "spill" / f"x@9{SPILL_SUFFIX}.tmp").write_bytes(b"half")  # died writing
    SpillingMemoryStore(tmp_path / "spill", max_bytes=1)
    assert [p.name for p in (tmp_path / "spill").iterdir()] == ["notes.txt"]


def test_make_store_spills_only_with_a_folder_and_a_budget(tmp_path) -> None:
    """In memory with a budget: the spilling store; without one: the plain store."""
    assert isinstance(make_store(None, spill_dir=tmp_path, memory_bytes=10), SpillingMemoryStore)
    assert type(make_store("", spill_dir=tmp_path, memory_bytes=0)) is MemoryStore
    assert type(make_store("memory", memory_bytes=10)) is MemoryStore


@pytest.mark.parametrize("value, ok", [(0, True), (1024, True), (0.5, True), (-1, False)])
def test_the_memory_budget_is_checked_by_the_config(value: float, ok: bool) -> None:
    """A negative budget is a config error; the default is 1 GiB."""
    assert ModelPoolSection().memory_mib == 1024
    if ok:
        assert ModelPoolSection(memory_mib=value).memory_mib == value
    else:
        with pytest.raises(ValueError, match="memory_mib"):
            ModelPoolSection(memory_mib=value)


def test_a_spill_that_cannot_be_written_keeps_the_snapshot_in_memory(tmp_path, caplog) -> None:
    """A full or vanished disk costs memory, never a snapshot or a failed push."""
    pool, size = frozen_pool(tmp_path, snapshots=1, budget_snapshots=1)
    (tmp_path / "spill").rmdir()
    (tmp_path / "spill").write_text("not a folder any more")
    pool.push("main", weights(1), {"frozen": True})
    assert pool.store.spilled() == 0 and pool.store.memory_bytes() == 2 * size
    assert "could not spill snapshot" in caplog.text
    for seed in range(2):
        np.testing.assert_array_equal(pool.pull(ModelKey("main", seed + 1)).weights["w"],
                                      weights(seed)["w"])
