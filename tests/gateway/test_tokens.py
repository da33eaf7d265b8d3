"""Tokens (hashed at rest, scopes, expiry, revocation seen by a running gateway within a
second), the ``msagent tokens`` commands, and per-client rate limits."""

from __future__ import annotations

import asyncio
import json
import stat
import time
import uuid
from pathlib import Path

import pytest
from redis.asyncio import Redis
from typer.testing import CliRunner

from msagent.cli import app as cli
from msagent.gateway.ratelimit import LEASE_TTL_S, RateLimiter, SharedRateLimiter, lease_size
from msagent.gateway.tokens import TokenError, TokenStore, hash_token
from tests.gateway.conftest import Api, Stream, episode, make_config


def test_tokens_are_stored_hashed_and_private(tmp_path: Path):
    store = TokenStore(tmp_path / "tokens.json")
    token_id, token = store.create("alice", ["download", "upload"], games=["cartpole"])
    text = store.path.read_text()
    assert token.startswith("msa_") and len(token) > 40
    assert token not in text and hash_token(token) in text
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    entry = json.loads(text)["tokens"][0]
    assert entry["token_id"] == token_id and entry["scopes"] == ["upload", "download"]
    principal = TokenStore(store.path).authenticate(token)
    assert principal.client == "alice" and principal.scopes == {"upload", "download"}
    assert TokenStore(store.path).authenticate(token + "x") is None
    assert TokenStore(store.path).authenticate("") is None


def test_expiry_and_revocation(tmp_path: Path):
    now = [1000.0]
    store = TokenStore(tmp_path / "tokens.json", clock=lambda: now[0])
    token = store.create("alice", ["upload"], expires_days=1, games=["g"])[1]
    other_id, other = store.create("alice", ["upload"], games=["g"])
    keep = store.create("bob", ["upload"], games=["g"])[1]
    assert store.authenticate(token) is not None
    now[0] += 86400
    assert store.authenticate(token) is None  # expired
    revoked = store.revoke(other_id)
    assert [e.token_id for e in revoked] == [other_id]
    assert TokenStore(store.path).authenticate(other) is None
    store.revoke("alice")  # every token of the client
    assert all(e.revoked for e in store.list() if e.client == "alice")
    assert TokenStore(store.path).authenticate(keep).client == "bob"
    with pytest.raises(TokenError, match="no token"):
        store.revoke("nobody")


@pytest.mark.parametrize("client,scopes,days", [
    ("bad name", ["upload"], None), ("a:b", ["upload"], None), ("ok", [], None),
    ("ok", ["root"], None), ("ok", ["upload"], 0), ("ok", ["upload"], -1)])
def test_bad_token_requests_are_refused(tmp_path: Path, client, scopes, days):
    with pytest.raises(TokenError):
        TokenStore(tmp_path / "tokens.json").create(client, scopes, days, games=["g"])


def test_revocation_reaches_a_running_app_within_a_second(tmp_path: Path, redis_url: str):
    cfg = make_config(tmp_path)
    store = TokenStore.of_data_dir(cfg.data_dir)
    token = store.create("alice", ["upload"], games=["cartpole"])[1]
    api = Api(cfg, redis_url)
    try:
        assert api.upload(token, episode(5)).status_code == 201
        TokenStore.of_data_dir(cfg.data_dir).revoke("alice")  # as `msagent tokens revoke`
        revoked_at = time.monotonic()
        while api.upload(token, episode(5)).status_code != 401:
            assert time.monotonic() - revoked_at < 2.0
            time.sleep(0.05)
        late = store.create("late", ["upload"], games=["cartpole"])[1]  # seen the same way
        deadline = time.monotonic() + 2.0
        while api.upload(late, episode(5)).status_code == 401:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        api.close()


def test_tokens_cli_round_trip(tmp_path: Path):
    config = tmp_path / "gateway.toml"
    config.write_text('[gateway]\ndata_dir = "data"\n[[gateway.games]]\nname = "g"\n'
                      'obs_shape = [2]\naction_n = 2\n')
    runner = CliRunner()
    made = runner.invoke(cli, ["tokens", "create", str(config), "--client", "alice",
                               "--scope", "upload", "--scope", "download",
                               "--game", "g", "--expires-days", "30"])
    assert made.exit_code == 0, made.output
    token = made.stdout.strip().splitlines()[-1]
    assert token.startswith("msa_")
    store = TokenStore(tmp_path / "data" / "tokens.json")
    assert store.authenticate(token).scopes == {"upload", "download"}
    listed = runner.invoke(cli, ["tokens", "list", str(config)])
    assert listed.exit_code == 0
    (entry,) = store.list()
    assert entry.token_id in listed.stdout and "alice" in listed.stdout
    assert "active" in listed.stdout
    assert token not in listed.stdout and entry.sha256 not in listed.stdout
    revoked = runner.invoke(cli, ["tokens", "revoke", str(config), entry.token_id])
    assert revoked.exit_code == 0 and entry.token_id in revoked.stdout
    assert "revoked" in runner.invoke(cli, ["tokens", "list", str(config)]).stdout
    assert TokenStore(store.path).authenticate(token) is None
    again = runner.invoke(cli, ["tokens", "revoke", str(config), "nobody"])
    assert again.exit_code == 2 and "no token" in again.output
    bad = runner.invoke(cli, ["tokens", "create", str(config), "--client", "x",
                              "--scope", "root", "--game", "g"])
    assert bad.exit_code == 2 and "scopes" in bad.output
    missing = runner.invoke(cli, ["tokens", "list", str(tmp_path / "nope.toml")])
    assert missing.exit_code == 2 and "no such config file" in missing.output


def test_token_bucket():
    now = [0.0]
    limiter = RateLimiter(rate_per_s=2, burst=3, clock=lambda: now[0])
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)
    assert limiter.take("b") == 0.0  # buckets are per client
    now[0] += 0.5
    assert limiter.take("a") == 0.0 and limiter.take("a") > 0
    now[0] += 100
    assert [limiter.take("a") for _ in range(4)][:3] == [0.0, 0.0, 0.0]  # capped at burst


def test_shared_token_buckets_hold_across_gateway_processes(redis_url: str):
    prefix = f"test:{uuid.uuid4().hex[:12]}"

    async def main() -> tuple[list[float], list[float], float]:
        clients = [Redis.from_url(redis_url) for _ in range(2)]
        try:  # two limiters on two connections: two worker processes of one gateway
            first, second = (SharedRateLimiter(c, prefix, rate_per_s=20, burst=3)
                             for c in clients)
            spent = [await first.take("alice"), await second.take("alice"),
                     await first.take("alice")]
            over = await asyncio.gather(second.take("alice"), first.take("alice"))
            await asyncio.sleep(0.12)  # 2.4 tokens come back
            return spent + [await first.take("bob")], list(over), await second.take("alice")
        finally:
            for key in await clients[0].keys(f"{prefix}:*"):
                await clients[0].delete(key)
            for c in clients:
                await c.aclose()

    spent, over, refilled = asyncio.run(main())
    assert spent == [0.0, 0.0, 0.0, 0.0]  # alice's burst of 3, then bob's own bucket
    assert over == [pytest.approx(0.05, abs=0.015)] * 2  # a refused call spends nothing
    assert refilled == 0.0


def test_leased_tokens_are_spent_without_redis_and_never_past_the_limit(redis_url: str):
    """Two workers lease 4 tokens at a time from one bucket of 10 (no refill to speak of):
    spending a held lease asks nothing of Redis, and all the workers together get exactly the
    bucket's 10 tokens; a lease is dropped after LEASE_TTL_S."""
    prefix = f"test:{uuid.uuid4().hex[:12]}"
    key, clock = f"{prefix}:rate:alice", [0.0]

    async def main() -> tuple[list[str], int, list[float], bool]:
        clients = [Redis.from_url(redis_url) for _ in range(2)]
        try:
            first, second = (SharedRateLimiter(c, prefix, rate_per_s=1e-6, burst=10, lease=4,
                                               clock=lambda: clock[0]) for c in clients)
            assert await first.take("alice") == 0.0  # took 4: spent 1, holds 3
            stored = [(await clients[0].hget(key, "tokens")).decode()]
            held = [first.take_now("alice") for _ in range(4)]
            stored.append((await clients[0].hget(key, "tokens")).decode())
            granted = 1 + held.count(True)
            waits = []
            for limiter in (second, second, first, second, first, second, first):
                waits.append(await limiter.take("alice"))
            granted += waits.count(0.0)
            granted += sum(limiter.take_now("alice") for limiter in (first, second)
                           for _ in range(5))
            expired_lease = SharedRateLimiter(clients[1], prefix, 1e-6, 10, lease=4,
                                              clock=lambda: clock[0])
            return stored, granted, waits, expired_lease.take_now("alice")
        finally:
            await clients[0].delete(key)
            for c in clients:
                await c.aclose()

    stored, granted, waits, after = asyncio.run(main())
    assert stored[0] == stored[1] and float(stored[0]) == pytest.approx(6, abs=1e-3)
    assert granted == 10  # the bucket's burst, over both workers, and not one more
    assert waits[-1] > 0 and not after


def test_concurrent_uploads_ask_for_one_lease_at_a_time(redis_url: str):
    """Six uploads of one client at once on a worker without a lease: one asks for a lease, the
    others for one token each, so none is refused while the bucket of 10 has tokens (each
    asking for a whole lease drained it: 429s under load with a limit far away)."""
    prefix = f"test:{uuid.uuid4().hex[:12]}"

    async def main() -> tuple[list[float], list[float]]:
        client = Redis.from_url(redis_url)
        try:
            limiter = SharedRateLimiter(client, prefix, rate_per_s=1e-6, burst=10, lease=4)
            burst = await asyncio.gather(*(limiter.take("alice") for _ in range(6)))
            rest = [await limiter.take("alice") for _ in range(5)]
            return list(burst), rest
        finally:
            await client.delete(f"{prefix}:rate:alice")
            await client.aclose()

    burst, rest = asyncio.run(main())
    assert burst == [0.0] * 6
    assert rest[:4] == [0.0] * 4 and rest[4] > 0  # 10 in all


def test_a_lease_is_spent_only_while_it_lasts(redis_url: str):
    prefix = f"test:{uuid.uuid4().hex[:12]}"
    clock = [100.0]

    async def main() -> tuple[bool, bool, float]:
        client = Redis.from_url(redis_url)
        try:
            limiter = SharedRateLimiter(client, prefix, rate_per_s=1e-6, burst=10, lease=5,
                                        clock=lambda: clock[0])
            await limiter.take("alice")
            fresh = limiter.take_now("alice")
            clock[0] += LEASE_TTL_S
            stale = limiter.take_now("alice")  # its 3 other tokens are dropped
            return fresh, stale, await limiter.take("alice")
        finally:
            await client.delete(f"{prefix}:rate:alice")
            await client.aclose()

    fresh, stale, again = asyncio.run(main())
    assert fresh and not stale and again == 0.0  # the bucket had 5 more to lease


def test_lease_sizes_keep_small_limits_exact():
    assert lease_size(0.5, 2, 2) == 1  # every upload asks Redis
    assert lease_size(100.0, 20, 2) == 2  # a quarter of a burst per worker
    assert lease_size(100.0, 1000, 2) == 10  # a tenth of a second of the rate
    assert lease_size(1e6, 1_000_000, 2) == 100_000


def test_shared_buckets_of_idle_clients_expire(redis_url: str):
    prefix = f"test:{uuid.uuid4().hex[:12]}"

    async def main() -> int:
        client = Redis.from_url(redis_url)
        try:
            await SharedRateLimiter(client, prefix, rate_per_s=2, burst=3).take("alice")
            return await client.ttl(f"{prefix}:rate:alice")
        finally:
            await client.delete(f"{prefix}:rate:alice")
            await client.aclose()

    assert 1 <= asyncio.run(main()) <= 3  # full again after burst / rate = 1.5 s


@pytest.mark.parametrize("where", ["process", "redis"])
def test_rate_limit_answers_429_with_retry_after(tmp_path: Path, redis_url: str, where: str):
    cfg = make_config(tmp_path, rate_per_s=0.5, burst=2, rate_limits=where)
    store = TokenStore.of_data_dir(cfg.data_dir)
    alice = store.create("alice", ["upload"], games=["cartpole"])[1]
    bob = store.create("bob", ["upload"], games=["cartpole"])[1]
    api, stream = Api(cfg, redis_url), Stream(cfg, redis_url)
    try:
        assert [api.upload(alice, episode(3)).status_code for _ in range(2)] == [201, 201]
        limited = api.upload(alice, episode(3))
        assert limited.status_code == 429
        assert limited.json() == {"error": "rate limit exceeded; slow down"}
        assert limited.headers["Retry-After"] == "2"
        assert api.upload(bob, episode(3)).status_code == 201
        assert len(stream) == 3
    finally:
        api.close()
        stream.close()
