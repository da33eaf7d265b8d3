"""Items leave after max_times_sampled draws; the on-policy queue hands out each item once."""

from __future__ import annotations

from collections import Counter

import pytest

from msagent.buffer import Table, on_policy_queue
from msagent.errors import RateLimitTimeout
from tests.buffer.helpers import make_table


@pytest.mark.parametrize("sampler", ["uniform", "prioritized", "fifo", "lifo"])
def test_items_removed_after_k_draws_one_at_a_time(sampler: str) -> None:
    table = make_table(sampler, max_size=10, max_times_sampled=3, seed=0)
    table.insert(["a", "b", "c", "d"])
    draws = [table.sample(1)[0] for _ in range(12)]
    assert Counter(d.key for d in draws) == {0: 3, 1: 3, 2: 3, 3: 3}
    for key in range(4):
        assert [d.times_sampled for d in draws if d.key == key] == [1, 2, 3]
    assert table.size == 0
    assert table.stats().removed_by_max_times_sampled == 4


def test_one_batch_draws_each_item_at_most_k_times() -> None:
    table = make_table("prioritized", max_size=10, max_times_sampled=2, seed=1)
    table.insert(list("abcde"), priorities=[100.0, 1.0, 1.0, 1.0, 1.0])
    counts = Counter(s.key for s in table.sample(10))
    assert counts == {k: 2 for k in range(5)}
    assert table.size == 0


def test_sample_waits_when_draws_left_are_too_few() -> None:
    table = make_table(max_size=10, max_times_sampled=2)
    table.insert(["a", "b"])
    with pytest.raises(RateLimitTimeout, match="4 draw"):
        table.sample(5, timeout_s=0.05)
    assert table.size == 2  # the refused call took nothing
    assert len(table.sample(4)) == 4


def test_on_policy_queue_returns_each_item_once_in_order() -> None:
    table = Table(on_policy_queue("rollouts", max_size=10))
    table.insert([f"f{i}" for i in range(10)])
    batches = [table.sample(n) for n in (3, 3, 4)]
    assert [s.item for batch in batches for s in batch] == [f"f{i}" for i in range(10)]
    assert all(s.times_sampled == 1 for batch in batches for s in batch)
    with pytest.raises(RateLimitTimeout, match=r"'rollouts'.*sample"):
        table.sample(1, timeout_s=0.05)


def test_on_policy_queue_blocks_inserts_when_full() -> None:
    table = Table(on_policy_queue("rollouts", max_size=3))
    table.insert(["a", "b", "c"])
    with pytest.raises(RateLimitTimeout, match=r"'rollouts'.*insert") as info:
        table.insert(["d"], timeout_s=0.05)
    assert info.value.inserted_keys == []
    assert [s.item for s in table.sample(3)] == ["a", "b", "c"]  # nothing was evicted
