"""Small builders and a thread runner shared by the buffer tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from msagent.buffer import RateLimiterConfig, Table, TableConfig

SAMPLER_PARAMS: dict[str, dict[str, float]] = {"prioritized": {"alpha": 1.0}}


def make_table(
    sampler: str = "uniform",
    remover: str = "fifo",
    max_size: int = 10,
    **kwargs: Any,
) -> Table:
    """A table named 'tbl' with the given parts (prioritized gets alpha=1)."""
    params = kwargs.pop("sampler_params", SAMPLER_PARAMS.get(sampler, {}))
    config = TableConfig(
        "tbl", max_size, sampler=sampler, sampler_params=params, remover=remover, **kwargs
    )
    return Table(config)


def ratio_table(min_size: int, spi: float, error_buffer: float, max_size: int = 100) -> Table:
    """A uniform table whose rate limiter keeps a sample/insert ratio."""
    limiter = RateLimiterConfig(min_size, spi, error_buffer)
    return make_table(max_size=max_size, rate_limiter=limiter)


class Background:
    """Runs a call in a thread and keeps its result or error for the test to check."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        """Call fn, remember what it gave, then signal done."""
        try:
            self.result = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc
        finally:
            self.done.set()

    def wait(self, timeout_s: float = 5.0) -> Any:
        """Wait for the call to finish and return its result (re-raising its error)."""
        assert self.done.wait(timeout_s), "background call did not finish in time"
        if self.error is not None:
            raise self.error
        return self.result
