"""Many threads inserting and sampling at once: nothing lost, nothing duplicated."""

from __future__ import annotations

from collections.abc import Callable

from msagent.buffer import SampledItem, Table, on_policy_queue
from tests.buffer.helpers import Background, make_table

INSERTERS, PER_INSERTER, INSERT_BATCH = 4, 120, 4
SAMPLERS, SAMPLE_BATCH = 3, 5
TOTAL = INSERTERS * PER_INSERTER


def _inserter(table: Table, who: int) -> Callable[[], list[int]]:
    """A thread body inserting (who, i) pairs in small batches."""

    def run() -> list[int]:
        keys: list[int] = []
        for start in range(0, PER_INSERTER, INSERT_BATCH):
            batch = [(who, i) for i in range(start, start + INSERT_BATCH)]
            keys += table.insert(batch, timeout_s=10.0)
        return keys

    return run


def _sampler(table: Table, rounds: int) -> Callable[[], list[SampledItem]]:
    """A thread body sampling a fixed number of batches."""
    return lambda: [s for _ in range(rounds) for s in table.sample(SAMPLE_BATCH, timeout_s=10.0)]


def test_on_policy_queue_loses_and_duplicates_nothing() -> None:
    table = Table(on_policy_queue("q", max_size=8))
    rounds = TOTAL // (SAMPLERS * SAMPLE_BATCH)
    samplers = [Background(_sampler(table, rounds)) for _ in range(SAMPLERS)]
    inserters = [Background(_inserter(table, who)) for who in range(INSERTERS)]
    keys = [k for job in inserters for k in job.wait(20.0)]
    drawn = [job.wait(20.0) for job in samplers]
    items = [s.item for batch in drawn for s in batch]
    assert sorted(items) == sorted((w, i) for w in range(INSERTERS) for i in range(PER_INSERTER))
    assert sorted(s.key for batch in drawn for s in batch) == sorted(keys) == list(range(TOTAL))
    for batch in drawn:  # each sampler got its items oldest first
        assert [s.key for s in batch] == sorted(s.key for s in batch)
    assert table.size == 0


def test_replay_table_stays_consistent_under_concurrent_use() -> None:
    table = make_table("prioritized", max_size=50, seed=0)
    jobs = [Background(_inserter(table, who)) for who in range(INSERTERS)]
    jobs += [Background(_sampler(table, 40)) for _ in range(SAMPLERS)]
    jobs += [Background(lambda: table.update_priorities(list(range(0, TOTAL, 3)), [2.0] * 160))]
    for job in jobs:
        job.wait(20.0)
    stats = table.stats()
    assert (stats.inserts, stats.size) == (TOTAL, 50)
    assert stats.evictions == TOTAL - 50
    assert stats.samples == SAMPLERS * 40 * SAMPLE_BATCH
    assert table.keys() == list(range(TOTAL - 50, TOTAL))
