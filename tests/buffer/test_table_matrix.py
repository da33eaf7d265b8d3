"""Every sampler with every remover: capacity, eviction choice, and where samples come from."""

from __future__ import annotations

import pytest

from msagent.buffer import REMOVER_KINDS, SAMPLER_KINDS
from tests.buffer.helpers import make_table

MAX_SIZE = 5
N_ITEMS = 8
SURVIVORS = {  # keys left after inserting 0..7 into a table of 5
    "fifo": [3, 4, 5, 6, 7],  # the oldest were evicted
    "lifo": [0, 1, 2, 3, 7],  # each overflow evicted the newest before it
}

matrix = pytest.mark.parametrize(
    ("sampler", "remover"), [(s, r) for s in SAMPLER_KINDS for r in REMOVER_KINDS]
)


def _item(key: int) -> str:
    """The value stored under a key in these tests."""
    return f"item{key}"


@matrix
def test_capacity_and_evicted_items(sampler: str, remover: str) -> None:
    table = make_table(sampler, remover, MAX_SIZE)
    for key in range(N_ITEMS):
        assert table.insert([_item(key)]) == [key]
        assert table.size == min(key + 1, MAX_SIZE)
    assert table.keys() == SURVIVORS[remover]
    assert table.stats().evictions == N_ITEMS - MAX_SIZE


@matrix
def test_one_batch_evicts_like_one_by_one(sampler: str, remover: str) -> None:
    table = make_table(sampler, remover, MAX_SIZE)
    assert table.insert([_item(k) for k in range(N_ITEMS)]) == list(range(N_ITEMS))
    assert table.keys() == SURVIVORS[remover]
    drawn = {s.key for s in table.sample(300)}
    assert drawn <= set(SURVIVORS[remover])


@matrix
def test_sampled_items_come_from_the_table(sampler: str, remover: str) -> None:
    table = make_table(sampler, remover, MAX_SIZE, seed=0)
    table.insert([_item(k) for k in range(N_ITEMS)], priorities=[1.0] * N_ITEMS)
    batch = table.sample(300)
    live = table.keys()
    assert all(s.key in live and s.item == _item(s.key) for s in batch)
    expected = {"fifo": {min(live)}, "lifo": {max(live)}}.get(sampler, set(live))
    assert {s.key for s in batch} == expected
    assert table.size == MAX_SIZE  # sampling without max_times_sampled removes nothing
