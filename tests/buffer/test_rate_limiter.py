"""RateLimiter: Reverb's arithmetic, its config checks, and blocking both ways with threads."""

from __future__ import annotations

import time

import pytest

from msagent.buffer import RateLimiter, RateLimiterConfig
from msagent.errors import ConfigError, RateLimitTimeout
from tests.buffer.helpers import Background, make_table, ratio_table

STILL_BLOCKED_S = 0.1


def test_sample_to_insert_ratio_arithmetic() -> None:
    limiter = RateLimiter(min_size_to_sample=2, samples_per_insert=2.0, error_buffer=3.0)
    assert (limiter.min_diff, limiter.max_diff) == (1.0, 7.0)  # offset 2*2 -/+ 3
    assert not limiter.can_sample(1)
    assert limiter.can_insert(3) and not limiter.can_insert(4)  # 4*2 - 0 > 7
    limiter.record_insert(3)
    assert limiter.can_sample(5) and not limiter.can_sample(6)  # 6 - 6 < 1
    limiter.record_sample(5)
    assert limiter.can_insert(3) and not limiter.can_insert(4)  # (3+3)*2 - 5 = 7, (3+4)*2 - 5 > 7


def test_min_size_only_and_deletes_shrink_the_size() -> None:
    limiter = RateLimiter(min_size_to_sample=3)
    limiter.record_insert(3)
    assert limiter.can_sample(1000) and limiter.can_insert(1000)
    limiter.record_delete(1)
    assert not limiter.can_sample(1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_size_to_sample": 0}, "min_size_to_sample"),
        ({"samples_per_insert": 1.0}, "together"),
        ({"error_buffer": 5.0}, "together"),
        ({"samples_per_insert": 2.0, "error_buffer": 1.5}, "error_buffer"),
        ({"samples_per_insert": -1.0, "error_buffer": 5.0}, "> 0"),
        ({"samples_per_insert": 1.0, "error_buffer": (5.0, 10.0)}, "deadlock"),
    ],
)
def test_bad_settings_are_config_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        RateLimiterConfig(**kwargs)


def test_queue_limiter_accepts_size_one() -> None:
    assert RateLimiterConfig.queue(1).diff_range() == (1.0, 0.0, 1.0)


def test_sampler_blocks_until_min_size_then_proceeds() -> None:
    table = make_table(max_size=20, rate_limiter=RateLimiterConfig(min_size_to_sample=5))
    waiter = Background(lambda: table.sample(2, timeout_s=5.0))
    table.insert(list("abcd"))
    assert not waiter.done.wait(STILL_BLOCKED_S)
    table.insert(["e"])
    assert {s.item for s in waiter.wait()} <= set("abcde")
    assert table.stats().blocked_samples == 1


def test_inserter_blocks_when_ahead_and_resumes_after_a_sample() -> None:
    table = ratio_table(min_size=1, spi=1.0, error_buffer=2.0)  # diff kept in [-1, 3]
    assert table.insert(list("abc"), timeout_s=0) == [0, 1, 2]
    waiter = Background(lambda: table.insert(["d"], timeout_s=5.0))
    assert not waiter.done.wait(STILL_BLOCKED_S)
    table.sample(1)
    assert waiter.wait() == [3]
    assert table.stats().blocked_inserts == 1


def test_batch_insert_commits_items_as_samples_make_room() -> None:
    table = ratio_table(min_size=1, spi=1.0, error_buffer=2.0)
    waiter = Background(lambda: table.insert(list("abcdef"), timeout_s=5.0))
    for _ in range(3):
        assert not waiter.done.wait(STILL_BLOCKED_S)
        table.sample(1)
    assert waiter.wait() == [0, 1, 2, 3, 4, 5]


def test_sample_timeout_names_table_and_side() -> None:
    table = make_table(rate_limiter=RateLimiterConfig(min_size_to_sample=2))
    table.insert(["a"])
    start = time.monotonic()
    with pytest.raises(RateLimitTimeout, match=r"'tbl'.*sample of 1") as info:
        table.sample(1, timeout_s=0.05)
    assert 0.04 < time.monotonic() - start < 1.0
    assert "min_size_to_sample=2" in str(info.value)
    assert table.stats().sample_timeouts == 1


def test_insert_timeout_keeps_items_already_inserted() -> None:
    table = ratio_table(min_size=1, spi=1.0, error_buffer=2.0)
    with pytest.raises(RateLimitTimeout, match=r"'tbl'.*insert.*after 3 of 5") as info:
        table.insert(list("abcde"), timeout_s=0.05)
    assert info.value.inserted_keys == [0, 1, 2]
    assert table.keys() == [0, 1, 2]
    assert table.stats().insert_timeouts == 1


def test_zero_timeout_fails_at_once_when_blocked() -> None:
    table = make_table()
    start = time.monotonic()
    with pytest.raises(RateLimitTimeout):
        table.sample(1, timeout_s=0)
    assert time.monotonic() - start < 0.05
