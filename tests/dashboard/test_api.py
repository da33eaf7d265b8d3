"""The dashboard's JSON API and assets through FastAPI's test client, and its command line."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from msagent.cli import USER_ERROR_EXIT, app
from msagent.dashboard.app import make_app
from msagent.dashboard.serve import is_loopback
from msagent.dashboard.synthetic import write_synthetic_run
from msagent.rundir.feed import RunFeed


def local(app: FastAPI) -> TestClient:
    """The app's test client, calling it by a loopback name (any other Host gets 400)."""
    return TestClient(app, base_url="http://127.0.0.1")


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    """A folder of two synthetic league runs (and a folder that is no run)."""
    write_synthetic_run(tmp_path, 4, 30, points=3)
    write_synthetic_run(tmp_path, 6, 30, points=3)
    (tmp_path / "not_a_run").mkdir()
    return tmp_path


def test_lists_the_runs_of_a_folder(runs: Path) -> None:
    listing = local(make_app(runs)).get("/api/runs").json()
    assert listing["exists"] and len(listing["runs"]) == 2
    assert all(r["name"] == "synthetic_league" and r["stamp"] for r in listing["runs"])


def test_serves_one_run_when_given_its_directory(runs: Path) -> None:
    path = sorted(p for p in runs.iterdir() if p.name.startswith("synthetic"))[1]
    client = local(make_app(path))
    [run] = client.get("/api/runs").json()["runs"]
    view = client.get(f"/api/runs/{run['id']}").json()
    assert len(view["ladder"]) == 9 and view["facts"]["kind"] == "league"


def test_unknown_runs_and_paths_are_refused(runs: Path) -> None:
    client = local(make_app(runs))
    for bad in ("nope", "..", "not_a_run", "%2e%2e%2fetc"):
        response = client.get(f"/api/runs/{bad}")
        assert response.status_code == 404, bad
    assert "no run 'nope'" in client.get("/api/runs/nope").json()["detail"]
    assert client.get("/static/app.py").status_code == 404
    assert client.get("/static/..%2fapp.py").status_code == 404


def test_stamp_and_view_follow_the_feed(runs: Path) -> None:
    client = local(make_app(runs))
    run_id = client.get("/api/runs").json()["runs"][0]["id"]
    before = client.get(f"/api/runs/{run_id}/stamp").json()["stamp"]
    view = client.get(f"/api/runs/{run_id}").json()
    league = {**_league(view), "reported": 31}
    RunFeed(runs / run_id).write_state({"kind": "league", "league": league})
    assert client.get(f"/api/runs/{run_id}/stamp").json()["stamp"] != before
    assert client.get(f"/api/runs/{run_id}").json()["matches"]["reported"] == 31


def test_a_missing_folder_is_served_empty(tmp_path: Path) -> None:
    client = local(make_app(tmp_path / "later"))
    listing = client.get("/api/runs").json()
    assert listing == {"root": str(tmp_path / "later"), "exists": False, "runs": []}
    assert "<title>msagent dashboard</title>" in client.get("/").text


def test_plotly_is_served_locally(runs: Path) -> None:
    response = local(make_app(runs)).get("/static/plotly.min.js")
    assert response.status_code == 200 and len(response.content) > 1_000_000
    assert "max-age" in response.headers["cache-control"]


def test_a_taken_port_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["dashboard", str(tmp_path), "--port", str(port)])
    assert result.exit_code == USER_ERROR_EXIT
    assert f"cannot serve the dashboard on 127.0.0.1:{port}" in result.output


def test_loopback_hosts() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")


def _league(view: dict) -> dict:
    """A league state rebuilt from nothing but what the synthetic generator wrote."""
    from msagent.dashboard.synthetic import synthetic_league

    return synthetic_league(len(view["ladder"]) - 3, 30)
