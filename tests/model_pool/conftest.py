"""Fixtures for model pool tests (the real ``redis-server`` fixture, ``redis_url``, lives in
``tests/conftest.py``: the league mirror needs it too)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# --- stores for the model pool -----------------------------------------------------------------

from msagent.model_pool import (MemoryStore, RedisStore, SpillingMemoryStore,  # noqa: E402
                                Store)

StoreFactory = Callable[[], Store]


@pytest.fixture(params=["memory", "spilling", "redis"])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store a parametrized test runs against."""
    return request.param


@pytest.fixture
def new_store(store_kind: str, request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """A factory of stores that all see the same snapshots, as separate processes would.

    Memory: the same MemoryStore each time. Spilling: the same SpillingMemoryStore with a
    budget of one byte, so every frozen snapshot but the newest lives in a file. Redis: a new
    client each time, under a prefix unique to the test, so tests never see each other's keys.
    """
    if store_kind in ("memory", "spilling"):
        shared = MemoryStore() if store_kind == "memory" else SpillingMemoryStore(
            request.getfixturevalue("tmp_path") / "spill", max_bytes=1)
        yield lambda: shared
        return
    url = request.getfixturevalue("redis_url")
    prefix = f"test:{uuid.uuid4().hex}"
    made: list[RedisStore] = []

    def make() -> RedisStore:
        made.append(RedisStore(url, prefix=prefix))
        return made[-1]

    yield make
    for store in made:
        store.close()
