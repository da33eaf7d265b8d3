"""Bad calls and configs fail with errors that name the problem, and change nothing."""

from __future__ import annotations

import math

import pytest

from msagent.buffer import RateLimiterConfig, Table, TableConfig, on_policy_queue
from msagent.errors import ConfigError
from tests.buffer.helpers import make_table


@pytest.fixture
def table() -> Table:
    """A prioritized table already holding three items."""
    table = make_table("prioritized", max_size=10, seed=0)
    table.insert(["a", "b", "c"], priorities=[1.0, 2.0, 3.0])
    return table


def _unchanged(table: Table) -> None:
    """Assert the fixture's three items are intact."""
    assert table.keys() == [0, 1, 2]
    assert table.stats().inserts == 3
    assert sorted(s.item for s in table.sample(200)) and table.size == 3


@pytest.mark.parametrize(
    ("priorities", "message"),
    [([1.0, -1.0], ">= 0"), ([1.0, math.nan], "finite"), ([1.0], "1 priorities for 2 items")],
)
def test_bad_priorities_insert_nothing(table: Table, priorities: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        table.insert(["d", "e"], priorities=priorities)
    _unchanged(table)


@pytest.mark.parametrize(("n", "error"), [(0, ValueError), (-2, ValueError), (1.5, TypeError)])
def test_bad_sample_sizes(table: Table, n: object, error: type) -> None:
    with pytest.raises(error, match="n must be"):
        table.sample(n)  # type: ignore[arg-type]
    _unchanged(table)


def test_bare_item_instead_of_list(table: Table) -> None:
    with pytest.raises(TypeError, match=r"wrap one item as \[item\]"):
        table.insert("d")  # type: ignore[arg-type]
    _unchanged(table)


def test_bad_priority_updates_change_nothing(table: Table) -> None:
    with pytest.raises(ValueError, match=">= 0"):
        table.update_priorities([0, 1], [5.0, -5.0])
    with pytest.raises(ValueError, match="2 priorities for 1 items"):
        table.update_priorities([0], [5.0, 5.0])
    assert [s.priority for s in table.sample(100) if s.key == 1][:1] == [2.0]


def test_priority_updates_skip_gone_keys_and_steer_sampling(table: Table) -> None:
    assert table.update_priorities([0, 1, 99], [0.0, 0.0, 7.0]) == 2
    assert {s.key for s in table.sample(200)} == {2}


def test_negative_timeout_is_refused(table: Table) -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        table.sample(1, timeout_s=-1.0)


def test_sample_larger_than_the_queue_could_ever_hold_fails_at_once() -> None:
    table = Table(on_policy_queue("q", max_size=4))
    with pytest.raises(ValueError, match="never be granted"):
        table.sample(5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_size": 0}, "max_size"),
        ({"max_size": 5, "max_times_sampled": -1}, "max_times_sampled"),
        ({"max_size": 5, "sampler": "random"}, r"'random'.*known kinds"),
        ({"max_size": 5, "remover": "oldest"}, r"'oldest'.*known kinds"),
        ({"max_size": 5, "sampler": "prioritized"}, "alpha"),
        ({"max_size": 5, "rate_limiter": RateLimiterConfig(6)}, "min_size_to_sample"),
    ],
)
def test_bad_table_configs(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TableConfig("t", **kwargs)
