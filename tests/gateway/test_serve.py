"""``msagent serve`` as a real process: killed with SIGKILL mid-load and restarted, no upload a
client was told is stored is lost or stored twice; with an embedded Redis and the ingestion
consumer, SIGTERM stops all three, and that Redis has a password no output or command line
shows; a bad config is one line and exit code 2."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import numpy as np
import psutil
import pytest
import redis

from msagent.client import GatewayClient, GatewayError
from msagent.client.http import wait_healthy
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_keys import StreamKeys
from msagent.gateway.redis_server import free_loopback_port
from msagent.gateway.tokens import TokenStore
from tests.gateway.conftest import Stream

REPO = Path(__file__).resolve().parents[2]


def _write_config(folder: Path, redis_url: str, ingest: bool, more: str = "",
                  prefix: str | None = None) -> Path:
    config = folder / "gateway.toml"
    prefix = prefix or f"test:{uuid.uuid4().hex[:12]}"
    limits = more or "rate_per_s = 100000.0\nburst = 100000\n"
    config.write_text(
        f'[gateway]\ndata_dir = "data"\nredis_url = "{redis_url}"\nprefix = "{prefix}"\n'
        f'ingest = {str(ingest).lower()}\n{limits}ingest_flush_s = 0.2\n'
        '[[gateway.games]]\nname = "cartpole"\nobs_shape = [4]\naction_n = 2\n')
    return config


def _serve(config: Path, port: int, log: Path) -> subprocess.Popen:
    """Start ``msagent serve`` and wait until it answers /healthz."""
    out = open(log, "ab")
    proc = subprocess.Popen([sys.executable, "-m", "msagent", "serve", str(config), "--port",
                             str(port)], cwd=REPO, stdout=out, stderr=subprocess.STDOUT)
    if wait_healthy(f"http://127.0.0.1:{port}", alive=lambda: proc.poll() is None):
        return proc
    proc.kill()
    raise AssertionError(f"gateway did not start:\n{log.read_text()}")


class Uploader(threading.Thread):
    """Uploads CartPole episodes in a loop; remembers what the gateway acknowledged."""

    def __init__(self, url: str, token: str, name: str) -> None:
        super().__init__(daemon=True)
        self.client = GatewayClient(url, token, client_version=name, timeout=5,
                                    max_retries=60, backoff_s=0.05, max_backoff_s=0.5)
        self.name_, self.acked, self.errors = name, [], []
        self.stop = threading.Event()

    def run(self) -> None:
        rng = np.random.default_rng(0)
        i = 0
        while not self.stop.is_set():
            episode_id = f"{self.name_}-{i}"
            try:
                answer = self.client.upload_episode(
                    "cartpole", rng.normal(size=(200, 4)).astype(np.float32),
                    rng.integers(0, 2, 200), np.ones(200, np.float32), True, False,
                    episode_id=episode_id)
                self.acked.append((episode_id, answer["status"]))
            except Exception as exc:  # noqa: BLE001  (reported by the test)
                self.errors.append(repr(exc))
            i += 1
        self.client.close()


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.slow
def test_gateway_killed_mid_load_loses_and_duplicates_nothing(tmp_path: Path, redis_url: str):
    config = _write_config(tmp_path, redis_url, ingest=False)
    token = TokenStore(tmp_path / "data" / "tokens.json").create("game", ["upload"],
                                                                 games=["cartpole"])[1]
    port, log = free_loopback_port(), tmp_path / "serve.log"
    proc = _serve(config, port, log)
    try:
        with _uploading(port, token, 2) as uploaders:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            at_kill = sum(len(u.acked) for u in uploaders)
            time.sleep(0.5)  # clients retry into a closed port meanwhile
            proc = _serve(config, port, log)
            _wait_for(lambda: sum(len(u.acked) for u in uploaders) >= at_kill + 40, 60,
                      "uploads after the restart")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    _assert_each_acked_upload_stored_once(config, redis_url, uploaders, at_kill + 40)
    assert "gateway stopped" in log.read_text()


@pytest.mark.slow
def test_a_worker_killed_mid_load_loses_and_duplicates_nothing(tmp_path: Path,
                                                               redis_url: str):
    config = _write_config(tmp_path, redis_url, ingest=False,
                           more="workers = 2\nrate_per_s = 100000.0\nburst = 100000\n")
    token = TokenStore(tmp_path / "data" / "tokens.json").create("game", ["upload"],
                                                                 games=["cartpole"])[1]
    port, log = free_loopback_port(), tmp_path / "serve.log"
    proc = _serve(config, port, log)
    try:
        with _uploading(port, token, 4) as uploaders:
            victim = _workers(proc.pid)[0]
            victim.kill()
            at_kill = sum(len(u.acked) for u in uploaders)
            _wait_for(lambda: sum(len(u.acked) for u in uploaders) >= at_kill + 80, 60,
                      "uploads after the kill")
            _wait_for(lambda: len(set(_workers(proc.pid)) - {victim}) == 2, 30,
                      "a new worker")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    _assert_each_acked_upload_stored_once(config, redis_url, uploaders, at_kill + 80)


@contextlib.contextmanager
def _uploading(port: int, token: str, count: int) -> Iterator[list[Uploader]]:
    """``count`` uploaders running, each with 20 uploads acknowledged; stopped on exit."""
    uploaders = [Uploader(f"http://127.0.0.1:{port}", token, f"u{k}") for k in range(count)]
    for u in uploaders:
        u.start()
    try:
        _wait_for(lambda: all(len(u.acked) >= 20 for u in uploaders), 60, "uploads")
        yield uploaders
    finally:
        for u in uploaders:
            u.stop.set()
        for u in uploaders:
            u.join(30)


def _assert_each_acked_upload_stored_once(config: Path, redis_url: str,
                                          uploaders: list[Uploader], at_least: int) -> None:
    """No uploader failed; every acknowledged upload is on the stream once; nothing twice."""
    assert not [e for u in uploaders for e in u.errors]
    from msagent.config.gateway import load_gateway_config

    stream = Stream(load_gateway_config(config), redis_url)
    try:
        stored = Counter(record.episode_id for record in stream.records())
    finally:
        stream.close()
    acked = [episode_id for u in uploaders for episode_id, _ in u.acked]
    assert len(acked) == len(set(acked)) >= at_least
    assert all(stored[episode_id] == 1 for episode_id in acked)
    assert max(stored.values()) == 1  # nothing stored twice, acknowledged or not


@pytest.mark.slow
def test_serve_with_embedded_redis_and_ingest_stops_everything_on_sigterm(tmp_path: Path,
                                                                         redis_url: str):
    config = _write_config(tmp_path, "", ingest=True)
    token = TokenStore(tmp_path / "data" / "tokens.json").create("game", ["upload", "admin"],
                                                                 games=["cartpole"])[1]
    port, log = free_loopback_port(), tmp_path / "serve.log"
    proc = _serve(config, port, log)
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
        names = " ".join(" ".join(c.cmdline()) for c in children)
        assert "redis-server" in names and "ingest" in names
        assert "redis redis://:***@127.0.0.1:" in log.read_text()
        url = f"http://127.0.0.1:{port}"
        with GatewayClient(url, token) as client:
            answer = client.upload_episode("cartpole", np.zeros((10, 4), np.float32),
                                           np.zeros(10, np.int64), np.ones(10, np.float32),
                                           True, False)
        assert answer["status"] == "stored"
        stats = lambda: httpx.get(f"{url}/v1/admin/stats",  # noqa: E731
                                  headers={"Authorization": f"Bearer {token}"}).json()
        health = httpx.get(f"{url}/healthz")
        assert "server" not in health.headers and "date" in health.headers  # no software named
        _wait_for(lambda: stats()["stream_length"] == 0, 60, "the consumer to ingest")
        assert (tmp_path / "data" / "redis" / "appendonlydir").is_dir()
        for other_port, why in ((port, "cannot serve"), (0, "used by another")):
            second = subprocess.run([sys.executable, "-m", "msagent", "serve", str(config),
                                     "--port", str(other_port)], cwd=REPO, capture_output=True,
                                    text=True, timeout=60)
            assert second.returncode == 2 and why in second.stderr, second.stderr
        assert stats()["stream_length"] == 0  # the first gateway is unharmed
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(60)
    assert rc == 0, log.read_text()
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive


@pytest.mark.slow
def test_the_embedded_redis_has_a_password_no_output_or_command_line_shows(tmp_path: Path):
    config = _write_config(tmp_path, "", ingest=True)
    token = TokenStore(tmp_path / "data" / "tokens.json").create("game", ["upload"],
                                                                 games=["cartpole"])[1]
    port, log = free_loopback_port(), tmp_path / "serve.log"
    proc = _serve(config, port, log)
    try:
        printed = log.read_text()
        assert re.search(r"redis redis://:\*\*\*@127\.0\.0\.1:\d+/0", printed), printed
        redis_port = int(re.search(r"redis://\S*127\.0\.0\.1:(\d+)/0", printed).group(1))
        anonymous = redis.Redis(port=redis_port, protocol=2)  # RESP2: no HELLO first
        with pytest.raises(redis.AuthenticationError, match="Authentication required"):
            anonymous.xadd("msagent:exp:stream", {"r": b"stored as someone else"})
        anonymous.close()
        family = [psutil.Process(proc.pid)] + psutil.Process(proc.pid).children(recursive=True)
        [consumer] = [c for c in family if " ingest " in _command(c)]
        password = urlsplit(consumer.environ()["MSAGENT_REDIS_URL"]).password
        assert password and len(password) >= 32
        assert all(password not in _command(p) for p in family)
        assert (tmp_path / "data" / "redis").stat().st_mode & 0o777 == 0o700
        if os.geteuid() == 0:  # another user sees the command lines, never the password
            _assert_nobody_cannot_reach(consumer.pid, redis_port, password)
        with GatewayClient(f"http://127.0.0.1:{port}", token) as client:
            client.upload_episode("cartpole", np.zeros((5, 4), np.float32),
                                  np.zeros(5, np.int64), np.ones(5, np.float32), True, False)
        store = ExperienceStore(str(tmp_path / "data" / "experience"))
        _wait_for(lambda: store.count("cartpole") == 1, 60, "the upload to reach the store")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, log.read_text()
    assert password not in log.read_text()


def _assert_nobody_cannot_reach(consumer: int, redis_port: int, password: str) -> None:
    """As user nobody: the consumer's command line holds no password, its environment is
    unreadable, and Redis refuses a write without the password."""
    nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    run = lambda *args: subprocess.run([*nobody, *args], capture_output=True,  # noqa: E731
                                       text=True, timeout=30)
    cmdline = run("cat", f"/proc/{consumer}/cmdline")
    assert "ingest" in cmdline.stdout and password not in cmdline.stdout
    assert run("cat", f"/proc/{consumer}/environ").returncode != 0
    xadd = run("redis-cli", "-p", str(redis_port), "XADD", "msagent:exp:stream", "*", "r", "x")
    assert "NOAUTH" in xadd.stdout + xadd.stderr


@pytest.mark.slow
def test_workers_share_the_port_and_the_rate_limits_and_die_with_serve(tmp_path: Path,
                                                                      redis_url: str):
    prefix = f"test:{uuid.uuid4().hex[:12]}"
    config = _write_config(tmp_path, redis_url, ingest=True, prefix=prefix,
                           more="workers = 2\nrate_per_s = 0.001\nburst = 6\ningest_nice = 7\n")
    token = TokenStore(tmp_path / "data" / "tokens.json").create("game", ["upload"],
                                                                 games=["cartpole"])[1]
    port, log = free_loopback_port(), tmp_path / "serve.log"
    proc = _serve(config, port, log)
    try:
        workers = _workers(proc.pid)
        consumer = [c for c in psutil.Process(proc.pid).children()
                    if " ingest " in _command(c)]
        assert len(workers) == 2 and "2 worker processes" in log.read_text()
        assert len(consumer) == 1 and consumer[0].nice() == 7
        statuses = [_upload_once(port, token, f"ep-{i}") for i in range(12)]
        assert sorted(statuses) == [201] * 6 + [429] * 6  # one bucket, whichever worker
        plain = redis.Redis.from_url(redis_url)
        assert plain.exists(f"{prefix}:rate:game") == 1
        plain.close()
        workers[0].kill()  # the supervisor starts another
        _wait_for(lambda: len(set(_workers(proc.pid)) - {workers[0]}) == 2, 30, "a new worker")
        assert _upload_once(port, token, "ep-99") == 429  # the bucket outlived the worker
        assert all(httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
                   for _ in range(6))
    finally:
        children = psutil.Process(proc.pid).children(recursive=True)
        proc.kill()  # no clean-up by msagent serve: its children must go by themselves
        proc.wait(10)
    gone, alive = psutil.wait_procs(children, timeout=15)
    assert not alive, [_command(p)[:80] for p in alive]
    plain = redis.Redis.from_url(redis_url)
    for key in plain.scan_iter(f"{prefix}:*"):
        plain.delete(key)
    plain.close()


def _command(process: psutil.Process) -> str:
    """A process's command line ("" once it is gone or a zombie)."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _workers(pid: int) -> list[psutil.Process]:
    """The live uvicorn worker processes of ``msagent serve`` (uvicorn spawns them)."""
    return [c for c in psutil.Process(pid).children() if "multiprocessing.spawn" in _command(c)]


def _upload_once(port: int, token: str, episode_id: str) -> int:
    """The status of one upload on a connection of its own."""
    with GatewayClient(f"http://127.0.0.1:{port}", token, max_retries=0) as client:
        try:
            answer = client.upload_episode("cartpole", np.zeros((3, 4), np.float32),
                                           np.zeros(3, np.int64), np.ones(3, np.float32),
                                           True, False, episode_id=episode_id)
        except GatewayError as exc:
            return exc.status
    return {"stored": 201, "duplicate": 200}[answer["status"]]


@pytest.mark.slow
def test_serve_with_a_bad_config_is_one_line_and_exit_2(tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[gateway]\nport = "eighty"\n')
    result = subprocess.run([sys.executable, "-m", "msagent", "serve", str(bad)], cwd=REPO,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "port" in result.stderr
    missing = subprocess.run([sys.executable, "-m", "msagent", "serve", str(tmp_path / "x")],
                             cwd=REPO, capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "no such config file" in missing.stderr


def test_serve_with_a_redis_password_variable_not_set_is_one_line_and_exit_2(tmp_path: Path):
    config = _write_config(tmp_path, "redis://:${MSAGENT_TEST_UNSET}@127.0.0.1:1/0", False)
    env = {k: v for k, v in os.environ.items() if k != "MSAGENT_TEST_UNSET"}
    result = subprocess.run([sys.executable, "-m", "msagent", "serve", str(config)], cwd=REPO,
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "redis_url: environment variable MSAGENT_TEST_UNSET is not set" in result.stderr


@pytest.fixture(autouse=True)
def _no_stray_children():
    """Every process a test started is gone when it ends."""
    before = {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}
    yield
    stray = [p for p in psutil.Process(os.getpid()).children(recursive=True)
             if p.pid not in before]
    for p in stray:
        p.kill()
    assert not stray


def test_a_dead_ingest_child_is_started_again(monkeypatch):
    from msagent.gateway import serve

    monkeypatch.setattr(serve, "INGEST_RESTART_DELAY_S", 0.05)
    args = [sys.executable, "-c", "import sys; sys.exit(3)"]
    child, stopping = [serve._spawn(args)], threading.Event()
    first = child[0]
    watcher = threading.Thread(target=serve._keep_running, args=(args, child, stopping))
    watcher.start()
    try:
        _wait_for(lambda: child[0] is not first, 10, "a restart")
    finally:
        stopping.set()
        watcher.join(10)
        child[0].wait(10)
    assert first.returncode == 3
