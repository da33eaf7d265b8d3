"""The dashboard over real sockets answers only requests naming an allowed Host (a web page
cannot read it by DNS rebinding) and never shows a password of a run's config."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from msagent.dashboard.serve import BackgroundServer
from msagent.dashboard.synthetic import write_synthetic_run

REPO = Path(__file__).resolve().parents[2]
SECRET_CONFIG = ('[run]\nname = "synthetic_league"\n\n[services.model_pool]\n'
                 'url = "redis://:hunter2@10.0.0.5:6379/0"\n')


@pytest.fixture()
def run_with_a_password(tmp_path: Path) -> Path:
    """A run whose saved config holds a literal Redis password."""
    run = write_synthetic_run(tmp_path, 4, 30, points=3)
    (run / "config.toml").write_text(SECRET_CONFIG)
    return run


def test_a_foreign_host_is_refused_and_a_loopback_one_served(run_with_a_password: Path):
    with BackgroundServer(run_with_a_password.parent) as server:
        port = server.url.rsplit(":", 1)[1]
        for host in ("evil.example", f"evil.example:{port}", "10.0.0.5"):
            response = httpx.get(f"{server.url}/api/runs", headers={"Host": host})
            assert response.status_code == 400, host
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            assert httpx.get(f"{server.url}/api/runs", headers={"Host": host}).status_code == 200


def test_a_password_in_a_runs_config_is_shown_as_stars(run_with_a_password: Path):
    with BackgroundServer(run_with_a_password.parent) as server:
        response = httpx.get(f"{server.url}/api/runs/{run_with_a_password.name}")
    assert response.status_code == 200
    assert "hunter2" not in response.text
    assert 'url = \\"redis://:***@10.0.0.5:6379/0\\"' in response.text


@contextmanager
def dashboard_process(root: Path, *options: str) -> Iterator[tuple[int, str]]:
    """``msagent dashboard ROOT OPTIONS`` as a process: its port and its first lines."""
    proc = subprocess.Popen([sys.executable, "-m", "msagent", "dashboard", str(root), "--port",
                             "0", *options], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        first = proc.stdout.readline()
        found = re.search(r"http://\S+:(\d+)/", first)
        assert found, first
        said = first + (proc.stdout.readline() if "0.0.0.0" in options else "")
        yield int(found.group(1)), said
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.slow
def test_on_a_wildcard_address_only_loopback_and_allowed_hosts_are_served(
        run_with_a_password: Path):
    with dashboard_process(run_with_a_password.parent, "--host", "0.0.0.0") as (port, said):
        assert "only loopback Host names are accepted" in said
        get = lambda host: httpx.get(f"http://127.0.0.1:{port}/api/runs",  # noqa: E731
                                     headers={"Host": host}, timeout=10).status_code
        assert get(f"127.0.0.1:{port}") == 200 and get(f"dash.example:{port}") == 400
    with dashboard_process(run_with_a_password.parent, "--host", "0.0.0.0", "--allow-host",
                           "dash.example") as (port, said):
        assert "only loopback" not in said
        assert httpx.get(f"http://127.0.0.1:{port}/api/runs", timeout=10,
                         headers={"Host": f"dash.example:{port}"}).status_code == 200


def test_the_dashboard_bounds_request_heads_like_the_gateway(
        run_with_a_password: Path):
    import json
    import socket

    with BackgroundServer(run_with_a_password.parent) as server:
        port = int(server.url.rsplit(":", 1)[1])
        conn = socket.create_connection(("127.0.0.1", port), timeout=15)
        try:
            conn.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 300_000)
        except ConnectionResetError:  # refused while still sending
            pass
        answer = b""
        try:
            while chunk := conn.recv(65536):
                answer += chunk
        except ConnectionResetError:  # closed with the rest of the head unread
            pass
        head, body = answer.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 431") and b"larger than" in body
        assert json.loads(body)["error"]
        conn.close()
