"""``msagent ingest`` as a real process: killed with SIGKILL mid-load (twice) and replaced, it
stores every record exactly once; SIGTERM and SIGINT write what it buffered before it exits 0;
without a Redis URL it exits 2 saying so."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis
from experience_samples import cartpole, new_keys, wait_until
from typer.testing import CliRunner

from msagent.cli import app
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_keys import CONSUMER_GROUP, RECORD_FIELD, StreamKeys

REPO = Path(__file__).resolve().parents[2]


def write_config(folder: Path, keys: StreamKeys, batch: int, flush_s: float,
                 claim_idle_ms: int) -> Path:
    """A gateway TOML of one CartPole-like game with the given consumer settings."""
    path = folder / "gateway.toml"
    path.write_text(f"""
[gateway]
prefix = "{keys.prefix}"
store = "exp"
ingest_batch = {batch}
ingest_flush_s = {flush_s}
claim_idle_ms = {claim_idle_ms}

[[gateway.games]]
name = "cartpole"
obs_shape = [4]
action_n = 2
""")
    return path


def start_consumer(config: Path, redis_url: str, log: Path) -> subprocess.Popen:
    """``python -m msagent ingest CONFIG --redis-url URL`` with its output in ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen([sys.executable, "-m", "msagent", "ingest", str(config),
                                 "--redis-url", redis_url], cwd=REPO, stdout=out, stderr=out)


def consumers(client: redis.Redis, keys: StreamKeys) -> dict[str, int]:
    """The group's consumers and how many entries each holds unacknowledged."""
    try:
        return {c["name"].decode(): c["pending"]
                for c in client.xinfo_consumers(keys.stream, CONSUMER_GROUP)}
    except redis.ResponseError:  # no group yet
        return {}


def joined(client: redis.Redis, keys: StreamKeys, proc: subprocess.Popen) -> bool:
    """Whether the consumer process has read from the group already."""
    return any(f"-{proc.pid}-" in name for name in consumers(client, keys))


def produce(client: redis.Redis, keys: StreamKeys, count: int, per_s: float) -> None:
    """XADD ``count`` records steadily, as the gateway would."""
    start = time.monotonic()
    for i in range(count):
        client.xadd(keys.stream, {RECORD_FIELD: cartpole(i, steps=5).to_msgpack()})
        time.sleep(max(0.0, start + (i + 1) / per_s - time.monotonic()))


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    """Send a signal and wait for the exit code."""
    proc.send_signal(sig)
    return proc.wait(timeout=20)


@pytest.mark.slow
def test_consumers_killed_mid_load_lose_and_duplicate_nothing(redis_url: str, tmp_path):
    client, keys, total = redis.Redis.from_url(redis_url), new_keys(), 3000
    config = write_config(tmp_path, keys, batch=40, flush_s=0.1, claim_idle_ms=400)
    store, log = ExperienceStore(str(tmp_path / "exp")), tmp_path / "ingest.log"
    producer = threading.Thread(target=produce, args=(client, keys, total, 500.0))
    producer.start()
    held_at_kill, rng = [], random.Random()
    proc = start_consumer(config, redis_url, log)
    try:
        for _ in range(2):
            wait_until(lambda: joined(client, keys, proc), 30, "the consumer to start")
            time.sleep(rng.uniform(0.1, 0.8))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            held_at_kill.append(sum(v for k, v in consumers(client, keys).items()
                                    if f"-{proc.pid}-" in k))
            proc = start_consumer(config, redis_url, log)
        producer.join(timeout=60)
        wait_until(lambda: client.xlen(keys.stream) == 0, 40, "the stream to drain")
        assert stop(proc) == 0, log.read_text()[-3000:]
    finally:
        proc.kill()
        producer.join(timeout=60)
    keys_stored = [(r.provenance.client_id, r.episode_id, r.part)
                   for r in store.episodes("cartpole")]
    assert len(keys_stored) == len(set(keys_stored)) == total == store.count("cartpole")
    assert {k[1] for k in keys_stored} == {f"ep-{i}" for i in range(total)}
    assert client.xpending(keys.stream, CONSUMER_GROUP)["pending"] == 0
    assert sum(held_at_kill) > 0, "no kill found entries in flight: the test proved nothing"
    assert "claimed" in log.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_writes_the_buffered_records(redis_url: str, tmp_path, sig: int):
    client, keys = redis.Redis.from_url(redis_url), new_keys()
    config = write_config(tmp_path, keys, batch=10_000, flush_s=600, claim_idle_ms=900_000)
    store, log = ExperienceStore(str(tmp_path / "exp")), tmp_path / "ingest.log"
    proc = start_consumer(config, redis_url, log)
    try:
        for i in range(25):
            client.xadd(keys.stream, {RECORD_FIELD: cartpole(i).to_msgpack()})
        wait_until(lambda: sum(consumers(client, keys).values()) == 25, 30, "25 buffered")
        assert store.count("cartpole") == 0
        assert stop(proc, sig) == 0, log.read_text()[-3000:]
    finally:
        proc.kill()
    assert store.count("cartpole") == 25
    assert client.xpending(keys.stream, CONSUMER_GROUP)["pending"] == 0
    assert client.xlen(keys.stream) == 0


def test_without_a_redis_url_ingest_exits_2_naming_the_fix(tmp_path):
    config = write_config(tmp_path, new_keys(), batch=10, flush_s=1.0, claim_idle_ms=1000)
    result = CliRunner().invoke(app, ["ingest", str(config)])
    assert result.exit_code == 2
    assert "--redis-url" in result.output
