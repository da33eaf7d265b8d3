"""Pushes from many threads, pools and processes get distinct, consecutive versions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from pool_samples import StoreFactory

from msagent.model_pool import ModelPool, RedisStore, SnapshotNotFoundError
from msagent.vocabulary import ModelKey

THREADS = 6
PUSHES_PER_THREAD = 12
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Iterator[None]:
    """Make the interpreter switch threads far more often, so races show up in a short test."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def push_many(pool: ModelPool, n: int = PUSHES_PER_THREAD) -> list[int]:
    """Push n small snapshots of "main" and return their versions."""
    return [pool.push("main", {"w": np.full(8, i, dtype=np.float32)}, {"i": i}).version for i in range(n)]


def run_in_threads(jobs: list[Callable[[], list[int]]]) -> list[int]:
    """Run jobs at once on threads and concatenate their results."""
    with ThreadPoolExecutor(max_workers=len(jobs)) as executor:
        futures = [executor.submit(job) for job in jobs]
        return [v for future in futures for v in future.result()]


def test_threads_on_one_pool_get_consecutive_versions(new_store: StoreFactory) -> None:
    """The service wrapper calls one pool from many threads."""
    pool = ModelPool(new_store(), keep_last=None)
    got = run_in_threads([lambda: push_many(pool)] * THREADS)
    assert sorted(got) == list(range(1, THREADS * PUSHES_PER_THREAD + 1))
    assert [k.version for k in pool.list("main")] == sorted(got)


def test_threads_on_separate_pools_share_one_counter(new_store: StoreFactory) -> None:
    """Pools sharing a store (as processes would) must not hand out a version twice."""
    pools = [ModelPool(new_store(), keep_last=4) for _ in range(THREADS)]
    got = run_in_threads([lambda p=p: push_many(p) for p in pools])
    total = THREADS * PUSHES_PER_THREAD
    assert sorted(got) == list(range(1, total + 1))
    assert [k.version for k in pools[0].list("main")] == list(range(total - 3, total + 1))


def test_pull_latest_never_fails_while_pushes_prune(new_store: StoreFactory) -> None:
    """A reader racing pruning must retry, never fail, and never go backwards."""
    pool = ModelPool(new_store(), keep_last=1)
    pool.push("main", {"w": np.zeros(8, dtype=np.float32)})
    started, done = threading.Barrier(3), threading.Event()

    def read() -> list[int]:
        started.wait()
        seen = [pool.pull_latest("main").key.version]
        while not done.is_set():
            seen.append(pool.pull_latest("main").key.version)
        assert seen == sorted(seen), "the latest version went backwards"
        return seen

    def write() -> list[int]:
        started.wait()
        try:
            push_many(pool, 40)
        finally:
            done.set()
        return []

    seen = run_in_threads([write, read, read])  # a failed pull_latest would raise here
    assert all(1 <= v <= 41 for v in seen)


def test_a_successful_freeze_is_never_undone_by_pruning(new_store: StoreFactory) -> None:
    """Freezing and pruning race across threads; a freeze that succeeded must hold."""
    pool = ModelPool(new_store(), keep_last=1)
    frozen: list[ModelKey] = []
    started, done = threading.Barrier(2), threading.Event()

    def freeze_latest() -> list[int]:
        started.wait()
        while not done.is_set() or not frozen:  # once pushes stop, the latest one can be frozen
            version = pool.latest_version("main")
            if version is not None:
                try:
                    pool.freeze(ModelKey("main", version))
                    frozen.append(ModelKey("main", version))
                except SnapshotNotFoundError:
                    pass  # pruned before we got to it: allowed
        return []

    def write() -> list[int]:
        started.wait()
        try:
            return push_many(pool, 40)
        finally:
            done.set()

    run_in_threads([write, freeze_latest])
    assert frozen
    assert set(frozen) <= set(pool.list("main"))
    assert all(pool.pull(key).metadata["frozen"] for key in frozen)


def test_two_pools_see_each_others_snapshots(new_store: StoreFactory) -> None:
    """Separate pools on one store see each other's pushes and freezes."""
    writer, reader = ModelPool(new_store()), ModelPool(new_store())
    key = writer.push("main", {"w": np.arange(3, dtype=np.int64)}, {"by": "writer"})
    assert reader.list() == [key]
    assert reader.latest_version("main") == 1
    np.testing.assert_array_equal(reader.pull_latest("main").weights["w"], [0, 1, 2])
    reader.freeze(key)
    assert writer.pull(key).metadata == {"by": "writer", "frozen": True}
    assert reader.push("main", {"w": np.zeros(1)}).version == 2


_CHILD = """
import json, sys
import numpy as np
import pytest
from msagent.model_pool import ModelPool, RedisStore
pool = ModelPool(RedisStore(sys.argv[1], prefix=sys.argv[2]), keep_last=5)
print(json.dumps([pool.push("main", {"w": np.zeros(4)}).version for _ in range(int(sys.argv[3]))]))
"""


@pytest.mark.slow
def test_two_processes_pushing_to_redis_get_consecutive_versions(redis_url: str) -> None:
    """Real processes pushing at once rely on Redis INCR for distinct versions."""
    prefix, n = f"test:procs:{os.getpid()}:{id(redis_url)}", 25
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    procs = [
        subprocess.Popen([sys.executable, "-c", _CHILD, redis_url, prefix, str(n)], env=env, stdout=subprocess.PIPE)
        for _ in range(2)
    ]
    got = [v for proc in procs for v in json.loads(proc.communicate(timeout=60)[0])]
    assert all(proc.returncode == 0 for proc in procs)
    assert sorted(got) == list(range(1, 2 * n + 1))
    pool = ModelPool(RedisStore(redis_url, prefix=prefix))
    assert [k.version for k in pool.list("main")] == list(range(2 * n - 4, 2 * n + 1))
