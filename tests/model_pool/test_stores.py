"""Store selection, Redis key layout and prefix isolation."""

from __future__ import annotations

import numpy as np
import pytest
import redis

from msagent.errors import ConfigError
from msagent.model_pool import MemoryStore, ModelPool, RedisStore, make_store
from msagent.vocabulary import ModelKey


@pytest.mark.parametrize("url", [None, "", "memory", "MEMORY"])
def test_make_store_defaults_to_memory(url: str | None) -> None:
    """Configuration without a url must give an in-process store."""
    assert isinstance(make_store(url), MemoryStore)


def test_make_store_builds_redis_stores_with_a_prefix(redis_url: str) -> None:
    """A redis:// url must give a RedisStore with the prefix asked for."""
    store = make_store(redis_url, prefix="custom")
    assert isinstance(store, RedisStore) and store.keys.prefix == "custom"
    store.close()


def test_make_store_refuses_unknown_urls() -> None:
    """A typo in the store url must fail at start-up, not later."""
    with pytest.raises(ConfigError, match="unknown model pool store 'file:///tmp/x'"):
        make_store("file:///tmp/x")


def test_redis_keys_are_namespaced_under_the_prefix(redis_url: str) -> None:
    """All keys live under the prefix, with ':' in policy ids escaped."""
    store = RedisStore(redis_url, prefix="layout:test")
    ModelPool(store).push("main:0", {"w": np.zeros(1)}, {"step": 1})
    keys = {k.decode() for k in redis.Redis.from_url(redis_url).keys("layout:test:*")}
    assert keys == {
        "layout:test:policies",
        "layout:test:main%3A0:counter",
        "layout:test:main%3A0:versions",
        "layout:test:main%3A0:1",
        "layout:test:main%3A0:1:meta",
    }
    store.close()


def test_pools_with_different_prefixes_do_not_see_each_other(redis_url: str) -> None:
    """Several pools can share one Redis server."""
    first, second = ModelPool(RedisStore(redis_url, "iso:a")), ModelPool(RedisStore(redis_url, "iso:b"))
    first.push("main", {"w": np.zeros(1)})
    assert second.list() == [] and second.policies() == []
    assert second.push("main", {"w": np.ones(1)}) == ModelKey("main", 1)
    np.testing.assert_array_equal(first.pull(ModelKey("main", 1)).weights["w"], [0.0])


def test_repr_hides_the_password() -> None:
    """Logs of a pool must not leak the Redis password."""
    store = RedisStore("redis://user:secret@127.0.0.1:1/0", prefix="p")
    assert "secret" not in repr(store) and "127.0.0.1:1/0" in repr(store)
