"""The dashboard's web app: one page, its scripts, and a small read-only JSON API.

API (documented in the README for scripts)::

    GET /api/runs                   [{id, name, created, stamp}] of the runs served
    GET /api/runs/{id}              the run's whole view (see msagent.dashboard.views)
    GET /api/runs/{id}/stamp        {"stamp": ...}: changes whenever the run's files change

The page polls the stamp and fetches the view again when it changes, so it follows a live run.
Run ids are directory names found by scanning the served folder: a request can name only
those runs, never a path. A request whose ``Host`` is not an allowed name gets 400, so a web
page cannot read the dashboard through a name of its own that resolves to this machine (DNS
rebinding); the run's config is shown with every password as ``***``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.middleware.trustedhost import TrustedHostMiddleware

from msagent.dashboard.assets import plotly_js
from msagent.dashboard.hosts import LOOPBACK_HOSTS
from msagent.dashboard.reader import find_runs, read_marker, read_run, stamp
from msagent.dashboard.views import run_view
from msagent.rundir.feed import plain

STATIC = Path(__file__).with_name("static")
ASSETS = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}


class ViewCache:
    """Each run's newest view as JSON bytes, rebuilt only when the run's stamp changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._views: dict[Path, tuple[str, bytes]] = {}

    def get(self, path: Path, run_id: str) -> tuple[str, bytes]:
        """``(stamp, view JSON)`` of the run at ``path``."""
        now = stamp(path)
        with self._lock:
            cached = self._views.get(path)
        if cached is not None and cached[0] == now:
            return cached
        body = json.dumps(plain(run_view(read_run(path), run_id)), allow_nan=False).encode()
        with self._lock:
            self._views[path] = (now, body)
        return now, body


def make_app(root: Path, allowed_hosts: Iterable[str] = LOOPBACK_HOSTS) -> FastAPI:
    """The dashboard app serving the run at ``root`` or the runs directly inside it, to
    requests whose ``Host`` (without port) is one of ``allowed_hosts``."""
    root = Path(root).expanduser().absolute()
    app = FastAPI(title="msagent dashboard", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts),
                       www_redirect=False)
    cache = ViewCache()

    def runs() -> dict[str, Path]:
        """Served runs by id (their directory names)."""
        return {p.name: p for p in find_runs(root)}

    def run_path(run_id: str) -> Path:
        """The directory of a served run, or a 404 naming the runs that exist."""
        found = runs()
        if run_id not in found:
            raise HTTPException(404, f"no run {run_id!r} under {root}; runs: {sorted(found)}")
        return found[run_id]

    @app.get("/", response_class=HTMLResponse)
    def index() -> Response:
        """The page."""
        return FileResponse(STATIC / "index.html", media_type="text/html")

    @app.get("/static/{name}")
    def asset(name: str) -> Response:
        """The page's own scripts and styles, and plotly.js (cached by the browser)."""
        headers = {"Cache-Control": "max-age=3600"}
        if name == "plotly.min.js":
            return FileResponse(plotly_js(), media_type="text/javascript", headers=headers)
        if name not in ASSETS:
            raise HTTPException(404, f"no asset {name!r}")
        return FileResponse(STATIC / name, media_type=ASSETS[name], headers=headers)

    @app.get("/api/runs")
    def list_runs() -> dict[str, Any]:
        """The runs served (none yet: an empty list and the folder, for the page to say so)."""
        return {"root": str(root), "exists": root.exists(),
                "runs": [_summary(p) for p in find_runs(root)]}

    @app.get("/api/runs/{run_id}")
    def view(run_id: str) -> Response:
        """One run's whole view."""
        now, body = cache.get(run_path(run_id), run_id)
        return Response(body, media_type="application/json", headers={"ETag": f'"{now}"'})

    @app.get("/api/runs/{run_id}/stamp")
    def run_stamp(run_id: str) -> dict[str, str]:
        """The run's revision, cheap to poll."""
        return {"stamp": stamp(run_path(run_id))}

    return app


def _summary(path: Path) -> dict[str, Any]:
    """A run's id, name, creation time and stamp, for the run list."""
    marker = read_marker(path)
    return {"id": path.name, "name": marker.get("name", path.name),
            "created": marker.get("created"), "stamp": stamp(path)}
