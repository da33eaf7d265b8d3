"""ReplayBuffer: several named tables behind one object."""

from __future__ import annotations

import pytest

from msagent.buffer import ReplayBuffer, TableConfig, on_policy_queue
from msagent.errors import ConfigError


@pytest.fixture
def buffer() -> ReplayBuffer:
    """An on-policy queue and a uniform replay table."""
    return ReplayBuffer([on_policy_queue("rollouts", 8), TableConfig("replay", 100, seed=0)])


def test_tables_are_independent(buffer: ReplayBuffer) -> None:
    assert buffer.table_names == ["rollouts", "replay"]
    assert buffer.insert("rollouts", ["a", "b"]) == [0, 1]
    assert buffer.insert("replay", ["x"]) == [0]
    assert [s.item for s in buffer.sample("rollouts", 2)] == ["a", "b"]
    assert (buffer.size("rollouts"), buffer.size("replay")) == (0, 1)
    assert buffer.stats("replay").inserts == 1
    assert set(buffer.all_stats()) == {"rollouts", "replay"}


def test_priorities_reach_the_named_table(buffer: ReplayBuffer) -> None:
    buffer.insert("replay", ["x", "y"], priorities=[1.0, 2.0])
    assert buffer.update_priorities("replay", [1], [4.0]) == 1
    assert {s.key: s.priority for s in buffer.sample("replay", 50)}.get(1) == 4.0


@pytest.mark.parametrize("call", ["insert", "sample", "size", "stats"])
def test_unknown_table_names_it_and_the_known_ones(buffer: ReplayBuffer, call: str) -> None:
    args = {"insert": (["a"],), "sample": (1,)}.get(call, ())
    with pytest.raises(ConfigError, match=r"unknown table 'rollout'.*'rollouts', 'replay'"):
        getattr(buffer, call)("rollout", *args)
    assert buffer.size("rollouts") == 0


def test_table_names_must_be_unique() -> None:
    with pytest.raises(ConfigError, match="repeated.*'a'"):
        ReplayBuffer([TableConfig("a", 5), TableConfig("a", 6)])
