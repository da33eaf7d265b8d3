"""``await_room``: async env workers' back-pressure. It waits until a table holds fewer than a
limit of items (a sample that takes them out makes room) and never reserves or inserts."""

from __future__ import annotations

import time

from msagent.buffer import Table, on_policy_queue
from tests.buffer.helpers import Background


def test_room_is_there_at_once_below_the_limit_and_times_out_at_it() -> None:
    table = Table(on_policy_queue("q", max_size=100))
    table.insert(list(range(3)))
    assert table.await_room(4, timeout_s=0.0)
    start = time.monotonic()
    assert not table.await_room(3, timeout_s=0.2)
    assert time.monotonic() - start >= 0.2 and table.size == 3


def test_a_sample_that_takes_items_out_makes_room_for_a_waiting_producer() -> None:
    table = Table(on_policy_queue("q", max_size=100))
    table.insert(list(range(4)))
    waiting = Background(lambda: table.await_room(4, timeout_s=10.0))
    time.sleep(0.1)
    assert not waiting.done.is_set()  # still full
    assert [s.item for s in table.sample(2)] == [0, 1]
    assert waiting.wait(5.0) is True and table.size == 2
