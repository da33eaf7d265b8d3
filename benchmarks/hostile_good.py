"""The hostile-client benchmark's well-behaved client: a separate process (so that the attack's
event loop never delays its clock) that opens its connection with a few valid uploads, then
sends one valid CartPole upload every ``interval_s`` through httpx while the attack runs,
timing each round trip. Every one of them must be stored (201)."""

from __future__ import annotations

import multiprocessing
import sys
import time
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

PATH = "/v1/games/cartpole/episodes"


class GoodClient:
    """The good client's process and the events that pace it.

    Args:
        url: The gateway.
        token: The good client's own upload token (its own rate limit).
        interval_s: Time between two uploads during the attack.
        warmup: Uploads sent back to back first (untimed: the connection, httpx's caches).
    """

    def __init__(self, url: str, token: str, interval_s: float, warmup: int) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.ready, self.attack, self.stop = ctx.Event(), ctx.Event(), ctx.Event()
        self.results, child_end = ctx.Pipe(duplex=False)
        self.process = ctx.Process(target=run, name="good-client", daemon=True, args=(
            url, token, interval_s, warmup, self.ready, self.attack, self.stop, child_end))
        self.process.start()

    def wait_warm(self, timeout_s: float = 120) -> None:
        """Block until the warm-up uploads are done."""
        if not self.ready.wait(timeout_s):
            raise SystemExit("the good client's warm-up did not finish")

    def finish(self) -> dict[str, Any]:
        """Stop it; its latencies (s) and failures."""
        self.stop.set()
        self.attack.set()
        out = self.results.recv() if self.results.poll(60) else {"latencies": [],
                                                                  "failures": ["no results"]}
        self.process.join(10)
        return out


def run(url: str, token: str, interval_s: float, warmup: int, ready: Event, attack: Event,
        stop: Event, results: Connection) -> None:
    """The process: warm-up, then timed uploads until told to stop."""
    import httpx

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    feed = _Bodies()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/msgpack"}
    failures: list[str] = []
    with httpx.Client(base_url=url, headers=headers, timeout=10) as client:
        for _ in range(warmup):
            _post(client, feed.next(), failures)
        ready.set()
        attack.wait()
        latencies = _paced(client, feed, interval_s, stop, failures)
    results.send({"latencies": latencies, "failures": failures, "warmup": warmup})


def _paced(client: Any, feed: _Bodies, interval_s: float, stop: Event,
           failures: list[str]) -> list[float]:
    """One upload every ``interval_s`` until ``stop`` (a late one delays the next rather than
    bunching the ones after it)."""
    latencies, due = [], time.perf_counter()
    while not stop.is_set():
        latencies.append(_post(client, feed.next(), failures))
        due = max(due + interval_s, time.perf_counter())
        time.sleep(max(0.0, due - time.perf_counter()))
    return latencies


def _post(client: Any, body: bytes, failures: list[str]) -> float:
    """One upload's round trip in seconds; anything but 201 is a failure."""
    import httpx

    start = time.perf_counter()
    try:
        response = client.post(PATH, content=body)
        if response.status_code != 201:
            failures.append(f"{response.status_code} {response.text[:200]}")
    except httpx.HTTPError as exc:
        failures.append(f"{type(exc).__name__}: {exc}")
    return time.perf_counter() - start


class _Bodies:
    """200-step CartPole episodes with fresh ids (``benchmarks/gateway.py``'s, 64 at a time)."""

    def __init__(self) -> None:
        import numpy as np
        from gateway import bodies

        self.rng, self.made, self.pool, self.bodies = np.random.default_rng(7), 0, [], bodies

    def next(self) -> bytes:
        """The next body."""
        if not self.pool:
            self.pool = self.bodies(64, self.rng, self.made)[::-1]
            self.made += 64
        return self.pool.pop()
