"""Runtime benchmark: Solver overhead vs plain Ray, batching under load, pub/sub fan-out.

Run: ``python benchmarks/runtime.py`` (embedded Ray on 127.0.0.1). Prints, in one run:
(a) median round trip of ``Solver.retrieve`` and of a plain Ray actor call, and their ratio;
(b) batched calls/s and mean batch size with 8 and 32 saturating callers;
(c) time to publish a 10 MB value and have 8 subscribers receive it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np  # noqa: E402
import ray  # noqa: E402

import msagent  # noqa: E402
from msagent import Solver, launch, publish, register, subscribe  # noqa: E402


class Echo:
    """The service under test: an echo, and a batched echo."""

    @register
    def echo(self, x: int) -> int:
        return x

    @register(batch=8, max_wait_ms=5)
    def echo_batch8(self, xs: list[int]) -> list[int]:
        return xs

    @register(batch=32, max_wait_ms=20)
    def echo_batch32(self, xs: list[int]) -> list[int]:
        return xs


@ray.remote(num_cpus=0)
class PlainEcho:
    """The baseline: a plain Ray actor."""

    def echo(self, x: int) -> int:
        return x


class Listener:
    """A subscriber service: waits for a topic's next version and reports when it arrived."""

    @register(concurrent=True)
    def receive(self, topic: str, after: int) -> float:
        found = subscribe(topic).wait_newer(after, timeout_s=60)
        assert found is not None and found[1]["w"].nbytes == 10 * 2**20
        return time.time()


def median_rtt_us(call, n: int) -> float:
    """Median wall time of ``call()`` in microseconds, after a warm-up."""
    for _ in range(min(200, n)):
        call()
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def round_trip(n: int) -> None:
    """(a) Solver.retrieve vs a plain actor call, interleaved in rounds to share noise."""
    launch(Echo)
    plain = PlainEcho.remote()
    solver = Solver()
    ours, base = [], []
    for _ in range(5):
        base.append(median_rtt_us(lambda: ray.get(plain.echo.remote(1)), n))
        ours.append(median_rtt_us(lambda: solver.retrieve(Echo, "echo", 1), n))
    o, b = statistics.median(ours), statistics.median(base)
    print(f"(a) round trip: Solver.retrieve {o:7.0f} us   plain Ray actor {b:7.0f} us   "
          f"ratio {o / b:.2f}x  (aim <= 1.3x)")


class Hammer:
    """A caller process: ``threads`` threads call the batched echo for ``seconds``."""

    @register
    def hammer(self, target: str, method: str, threads: int, seconds: float) -> int:
        stop, counts = threading.Event(), [0] * threads

        def loop(i: int) -> None:
            solver = Solver()
            solver.retrieve(target, "echo", 0)  # warm the route
            while not stop.is_set():
                solver.retrieve(target, method, i)
                counts[i] += 1

        workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
        for t in workers:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in workers:
            t.join()
        return sum(counts)


def batched(callers: int, seconds: float, handle, processes: int) -> None:
    """(b) ``callers`` saturating callers, spread over ``processes`` caller processes."""
    method = f"echo_batch{callers}"
    start = time.perf_counter()
    futures = [Solver().retrieve_async("Hammer", "hammer", handle.name, method,
                                       callers // processes, seconds) for _ in range(processes)]
    total = sum(Solver.gather(futures))
    elapsed = time.perf_counter() - start
    calls, batches = _batch_totals(handle, method)
    mean = calls / max(batches, 1)
    wait = Echo.__dict__[method].__msagent_spec__.max_wait_ms
    print(f"(b) batch={callers}, max_wait_ms={wait:g}, {callers:2d} callers in {processes} "
          f"processes: "
          f"{total / elapsed:7.0f} calls/s   mean batch {mean:5.1f} = {mean / callers:.2f}x N"
          f"  (aim >= 0.8x N)")


def _batch_totals(handle, method: str) -> tuple[int, int]:
    """(calls, batches) served so far by a batched echo."""
    sizes = handle.stats()[0]["batch_sizes"][method]
    return (sum(int(s) * c for s, c in sizes.items()), sum(sizes.values()))


def fan_out(subscribers: int) -> None:
    """(c) publish 10 MB; time until every subscriber service has it."""
    launch(Listener, num=subscribers)
    value = {"w": np.random.default_rng(0).standard_normal(10 * 2**18).astype(np.float32)}
    times = []
    for round_ in range(3):
        topic = f"bench/params/{round_}"
        waits = [Solver().retrieve_async(Listener, "receive", topic, 0) for _ in range(subscribers)]
        time.sleep(1.0)  # every listener is now blocked in wait_newer
        start = time.time()
        publish(topic, value)
        times.append(max(Solver.gather(waits)) - start)
    print(f"(c) publish 10 MB -> {subscribers} subscribers received: "
          f"median {statistics.median(times) * 1000:.0f} ms over {len(times)} rounds")


def main() -> None:
    """Run the three measurements on one embedded Ray."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--processes", type=int, default=4, help="caller processes for (b)")
    args = parser.parse_args()
    msagent.init(backend="ray")
    print(f"python {sys.version.split()[0]}, ray {ray.__version__}, {os.cpu_count()} cores")
    round_trip(args.calls)
    handle = launch(Echo, name="EchoBatch")
    launch(Hammer, num=args.processes)
    for callers in (8, 32):
        batched(callers, args.seconds, handle, args.processes)
    fan_out(8)
    msagent.shutdown()


if __name__ == "__main__":
    main()
