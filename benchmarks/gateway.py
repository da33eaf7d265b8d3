"""Game-client gateway under load: uploads of 200-step CartPole episodes from concurrent
clients on loopback, beside a bare ``XADD`` of the same payloads to the same Redis.

Run: ``python benchmarks/gateway.py [--uploads 10000] [--concurrency 32] [--workers 2]``. In
one invocation it starts a private redis-server (append-only, ``appendfsync everysec``: the
gateway's default), measures

1. the baseline: ``--concurrency`` asyncio Redis clients each ``XADD``-ing the stream entries
   the gateway writes for the same bodies, one command per episode;
2. ``msagent serve`` (uvicorn, with its ingestion consumer writing Parquet) under the same
   number of concurrent keep-alive HTTP clients (``benchmarks/http_load.py``), each POSTing
   msgpack episodes with a fresh idempotency key;

and prints uploads/s, p50/p99 latency, the ingestion lag (largest stream backlog during the
load; seconds from the last accepted upload until every episode is in the store) and the
ratio to the bare XADD rate. Targets on a 2-core machine: >= 1,000 uploads/s, p99 < 100 ms,
>= 0.5x the bare XADD rate.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgpack
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from http_load import post_all  # noqa: E402

from msagent.experience.records import Provenance, encode_array
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_entry import upload_entry
from msagent.experience.stream_keys import StreamKeys
from msagent.gateway.redis_server import embedded_redis, free_loopback_port
from msagent.gateway.tokens import TokenStore

STEPS = 200
VARIANTS = 64
"""Distinct episodes (arrays); each upload gets its own episode id."""


def episodes(rng: np.random.Generator) -> list[dict]:
    """Upload bodies (without their ids) of random 200-step CartPole-shaped episodes."""
    out = []
    for _ in range(VARIANTS):
        out.append({"observations": encode_array(rng.normal(size=(STEPS, 4)).astype(np.float32)),
                    "actions": encode_array(rng.integers(0, 2, STEPS)),
                    "rewards": encode_array(np.ones(STEPS, np.float32)),
                    "log_probs": encode_array(np.full(STEPS, -0.69, np.float32)),
                    "terminated": True, "truncated": False, "model_version": 1})
    return out


def bodies(n: int, rng: np.random.Generator, first: int = 0) -> list[bytes]:
    """``n`` msgpack upload bodies with distinct episode ids (``bench-<first>`` on)."""
    base = episodes(rng)
    return [msgpack.packb({**base[i % VARIANTS], "episode_id": f"bench-{first + i}"})
            for i in range(n)]


def entries(payloads: list[bytes]) -> list[bytes]:
    """The stream entries the gateway writes for these upload bodies (msgpack uploads travel
    as sent, beside the gateway's provenance): what the bare ``XADD`` adds."""
    stamp = Provenance("bench", time.time())
    return [upload_entry("cartpole", stamp, body) for body in payloads]


async def bare_xadd(url: str, payloads: list[bytes], concurrency: int) -> dict:
    """The baseline: concurrent clients XADD the payloads, one command each."""
    from redis.asyncio import Redis

    redis = Redis.from_url(url, max_connections=concurrency)
    queue = list(reversed(payloads))
    latencies: list[float] = []

    async def worker() -> None:
        while queue:
            payload = queue.pop()
            t = time.perf_counter()
            await redis.xadd("bench:bare", {b"r": payload})
            latencies.append(time.perf_counter() - t)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    await redis.delete("bench:bare")
    await redis.aclose()
    return summary(len(payloads), elapsed, latencies)


async def http_load(url: str, token: str, payloads: list[bytes], concurrency: int,
                    redis_url: str, keys: StreamKeys) -> dict:
    """Concurrent keep-alive HTTP clients POST the bodies; the largest stream backlog is
    sampled."""
    from redis.asyncio import Redis

    latencies: list[float] = []
    statuses: dict[int, int] = {}
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/msgpack"}
    redis, backlog, done = Redis.from_url(redis_url), [0], asyncio.Event()

    def on_status(status: int, seconds: float) -> None:
        statuses[status] = statuses.get(status, 0) + 1
        latencies.append(seconds)

    async def sample_backlog() -> None:
        while not done.is_set():
            backlog[0] = max(backlog[0], await redis.xlen(keys.stream))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), 0.1)

    sampler = asyncio.create_task(sample_backlog())
    host, port = url.removeprefix("http://").rsplit(":", 1)
    elapsed = await post_all(host, int(port), "/v1/games/cartpole/episodes", headers,
                             payloads, concurrency, on_status)
    done.set()
    await sampler
    await redis.aclose()
    return {**summary(len(payloads), elapsed, latencies), "statuses": statuses,
            "max_backlog": backlog[0]}


def cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system) so far of this process and of each child by its role."""
    import psutil

    me = psutil.Process()
    out = {"load generator": sum(me.cpu_times()[:2])}
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            cmd = " ".join(child.cmdline())
            role = ("redis" if "redis" in child.name() else "consumer" if " ingest " in cmd
                    else "gateway")  # msagent serve and its worker processes
            out[role] = out.get(role, 0.0) + sum(child.cpu_times()[:2])
    return out


def cpu_per_upload(before: dict[str, float], after: dict[str, float], n: int) -> dict:
    """Microseconds of CPU per upload spent by each process during the load."""
    return {role: round((after[role] - before.get(role, 0.0)) / n * 1e6)
            for role in after}


def summary(n: int, elapsed: float, latencies: list[float]) -> dict:
    """Rate and latency percentiles of one load."""
    lat = np.array(latencies) * 1000
    return {"count": n, "seconds": round(elapsed, 2), "per_s": round(n / elapsed, 1),
            "p50_ms": round(float(np.percentile(lat, 50)), 2),
            "p99_ms": round(float(np.percentile(lat, 99)), 2)}


def start_gateway(folder: Path, redis_url: str, workers: int,
                  ingest_nice: int) -> tuple[subprocess.Popen, str]:
    """``msagent serve`` on a free port with its ingestion consumer; its URL once healthy."""
    from msagent.client.http import wait_healthy

    port = free_loopback_port()
    config = folder / "gateway.toml"
    config.write_text(f'[gateway]\nport = {port}\ndata_dir = "data"\nredis_url = "{redis_url}"\n'
                      "rate_per_s = 1000000.0\nburst = 1000000\ningest_batch = 5000\n"
                      "rate_bytes_per_s = 1.0e12\n"  # one token sends every body
                      f"ingest_nice = {ingest_nice}\n"
                      + (f"workers = {workers}\n" if workers > 1 else "") +
                      '[[gateway.games]]\nname = "cartpole"\nenv = "CartPole-v1"\n'
                      "max_steps = 500\n")
    proc = subprocess.Popen([sys.executable, "-m", "msagent", "serve", str(config)],
                            stdout=subprocess.DEVNULL, stderr=open(folder / "serve.log", "w"))
    url = f"http://127.0.0.1:{port}"
    if wait_healthy(url, alive=lambda: proc.poll() is None):
        return proc, url
    proc.kill()
    log = (folder / "serve.log").read_text()[-2000:]
    raise SystemExit(f"msagent serve did not become healthy:\n{log}")


def wait_ingested(store: ExperienceStore, n: int, timeout_s: float = 120) -> float:
    """Seconds until the store holds ``n`` episodes of the game."""
    start = time.perf_counter()
    while store.count("cartpole") < n:
        if time.perf_counter() - start > timeout_s:
            raise SystemExit(f"only {store.count('cartpole')} of {n} episodes were ingested")
        time.sleep(0.05)
    return time.perf_counter() - start


def gateway_round(url: str, token: str, payloads: list[bytes], args: argparse.Namespace,
                  redis_url: str, store: ExperienceStore, stored_after: int) -> dict:
    """One load on the running gateway: rate, latency, backlog, ingestion lag, CPU."""
    before = cpu_seconds()
    gateway = asyncio.run(http_load(url, token, payloads, args.concurrency, redis_url,
                                    StreamKeys()))
    loaded = cpu_seconds()
    gateway["ingest_lag_s"] = round(wait_ingested(store, stored_after), 2)
    gateway["cpu_us_per_upload"] = cpu_per_upload(before, loaded, len(payloads))
    gateway["consumer_us_per_episode"] = cpu_per_upload(
        before, cpu_seconds(), len(payloads))["consumer"]
    return gateway


def main() -> None:
    """Rounds of (baseline, gateway) on one Redis and one gateway; each round's line, then the
    medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=10_000, help="uploads per round")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2,
                        help="gateway worker processes ([gateway] workers; the README's "
                             "figures: 2 and 1 on a 2-core machine)")
    parser.add_argument("--ingest-nice", type=int, default=10,
                        help="the consumer's niceness ([gateway] ingest_nice)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternating (bare XADD, gateway) rounds; medians reported (the "
                             "baseline's rate moves by a third between rounds)")
    args = parser.parse_args()
    rng, rounds = np.random.default_rng(0), []
    with tempfile.TemporaryDirectory() as tmp, embedded_redis(Path(tmp)) as redis_url:
        folder = Path(tmp)
        token = TokenStore.of_data_dir(folder / "data").create("bench", ["upload"],
                                                               games=["cartpole"])[1]
        proc, url = start_gateway(folder, redis_url, args.workers, args.ingest_nice)
        store = ExperienceStore(str(folder / "data" / "experience"))
        try:
            for r in range(args.rounds):
                payloads = bodies(args.uploads, rng, r * args.uploads)
                bare = asyncio.run(bare_xadd(redis_url, entries(payloads), args.concurrency))
                gateway = gateway_round(url, token, payloads, args, redis_url, store,
                                        (r + 1) * args.uploads)
                rounds.append({"bare_xadd": bare, "gateway": gateway,
                               "gateway_vs_bare": round(gateway["per_s"] / bare["per_s"], 3)})
                print(f"round {r + 1}: {line(rounds[-1])}", flush=True)
        finally:
            proc.terminate()
            proc.wait(30)
    print(json.dumps({"rounds": rounds, "cpus": os.cpu_count()}, indent=1))
    median = lambda pick: float(np.median([pick(r) for r in rounds]))  # noqa: E731
    ratios = sorted(r["gateway_vs_bare"] for r in rounds)
    print(f"median of {len(rounds)} rounds: gateway {median(lambda r: r['gateway']['per_s']):.0f}"
          f" uploads/s (p99 {median(lambda r: r['gateway']['p99_ms']):.1f} ms), bare XADD "
          f"{median(lambda r: r['bare_xadd']['per_s']):.0f}/s, ratio "
          f"{median(lambda r: r['gateway_vs_bare']):.3f} (rounds {ratios[0]:.3f}-{ratios[-1]:.3f})")


def line(round_: dict) -> str:
    """One round in words."""
    gateway, bare = round_["gateway"], round_["bare_xadd"]
    return (f"gateway {gateway['per_s']:.0f} uploads/s (p50 {gateway['p50_ms']} ms, p99 "
            f"{gateway['p99_ms']} ms), bare XADD {bare['per_s']:.0f}/s: ratio "
            f"{round_['gateway_vs_bare']:.3f}; ingestion lag {gateway['ingest_lag_s']} s "
            f"after the last upload (largest backlog {gateway['max_backlog']} entries); CPU us "
            f"per upload {gateway['cpu_us_per_upload']}")


if __name__ == "__main__":
    main()
