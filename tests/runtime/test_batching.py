"""Batched methods: calls from many callers are served together, each gets its own answer."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from msagent import Solver, launch
from msagent.errors import BatchSizeError

from tests.runtime.helpers import Batched


def _batch_sizes(handle) -> dict[int, int]:
    sizes: dict[int, int] = {}
    for stats in handle.stats():
        for size, count in stats["batch_sizes"].get("predict", {}).items():
            sizes[int(size)] = sizes.get(int(size), 0) + count
    return sizes


def test_concurrent_callers_are_gathered_into_batches(backend: str) -> None:
    handle = launch(Batched)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: Solver().retrieve(handle, "predict", i), range(64)))
    assert answers == [i * 10 for i in range(64)]
    sizes = _batch_sizes(handle)
    assert sum(s * c for s, c in sizes.items()) == 64
    mean = sum(s * c for s, c in sizes.items()) / sum(sizes.values())
    assert mean >= 4, sizes  # 8 callers, batch=8: most calls share a batch
    assert max(sizes) <= 8


def test_a_lone_caller_is_served_after_max_wait(backend: str) -> None:
    launch(Batched)
    Solver().retrieve(Batched, "ping")  # warm the route
    start = time.perf_counter()
    assert Solver().retrieve(Batched, "lone", 5) == 5
    elapsed = time.perf_counter() - start
    assert 0.19 <= elapsed < 1.0  # max_wait_ms=200, batch=2 never fills


def test_wrong_result_length_fails_every_caller_of_the_batch(backend: str) -> None:
    launch(Batched)
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(Solver().retrieve, Batched, "wrong_length", i) for i in range(4)]
        errors = [f.exception(timeout=30) for f in futures]
    assert all(isinstance(e, BatchSizeError) for e in errors), errors
    assert all("Batched.wrong_length" in str(e) and "results for a batch of" in str(e)
               for e in errors)
    assert Solver().retrieve(Batched, "predict", 3) == 30  # the service keeps serving


@pytest.mark.parametrize("callers", [3])
def test_batched_call_with_keyword_arguments(backend: str, callers: int) -> None:
    launch(Batched)
    with ThreadPoolExecutor(callers) as pool:
        out = list(pool.map(lambda i: Solver().retrieve(Batched, "predict", obs=i), range(6)))
    assert out == [0, 10, 20, 30, 40, 50]
