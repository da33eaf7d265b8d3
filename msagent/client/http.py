"""A game client's side of the gateway: upload episodes, download the newest published model.

Uploads are msgpack with raw array bytes and carry an episode id (an idempotency key), so
retrying one after a dropped connection, a 429 or a 503 never stores it twice; the client
retries those with exponential backoff (honouring ``Retry-After``). Models are cached on disk
by version and re-downloaded only when the newest manifest's sha256 changes (ETags), and
every downloaded file's sha256 is checked.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import tempfile
import time
import uuid
from pathlib import Path
from collections.abc import Callable
from typing import Any

import httpx
import msgpack
import numpy as np

from msagent.experience.records import encode_array

RETRY_STATUSES = frozenset({429, 502, 503, 504})
"""Answers worth retrying (the upload's episode id makes a retry safe)."""

RETRY_AFTER_CAP_S = 60.0
"""Longest ``Retry-After`` honoured."""

LATEST = "latest.json"
"""The cached manifest of the newest model, in ``<cache_dir>/<game>/``."""


class GatewayError(Exception):
    """The gateway refused a request (status 4xx/5xx), or could not be reached (status 0).

    Attributes:
        status: The HTTP status (0: no answer, e.g. connection refused after every retry).
        reason: The gateway's ``error`` text, or what went wrong.
    """

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"gateway answered {status}: {reason}" if status
                         else f"gateway unreachable: {reason}")
        self.status = status
        self.reason = reason


class GatewayClient:
    """Talks to one gateway with one token.

    Args:
        base_url: E.g. ``http://127.0.0.1:8700``.
        token: A token from ``msagent tokens create``.
        client_version: Recorded with every upload (at most 64 printable characters).
        timeout: Seconds per HTTP request.
        max_retries: Retries of one call (connection errors, 429, 502-504) before giving up.
        backoff_s: First retry delay (doubled each retry, jittered, at most ``max_backoff_s``).
        max_backoff_s: Longest delay between retries.
    """

    def __init__(self, base_url: str, token: str, client_version: str = "", timeout: float = 10,
                 max_retries: int = 8, backoff_s: float = 0.1, max_backoff_s: float = 5.0):
        self.client_version = client_version
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout,
                                  headers={"Authorization": f"Bearer {token}"})

    def upload_episode(self, game: str, observations: Any, actions: Any, rewards: Any,
                       terminated: bool, truncated: bool, log_probs: Any = None,
                       model_version: int | None = None, episode_id: str | None = None,
                       part: int = 0) -> dict[str, Any]:
        """Upload one episode (or part ``part`` of one); the gateway's answer, e.g.
        ``{"status": "stored", "entry": "..."}`` or ``{"status": "duplicate", ...}``."""
        body = {"episode_id": episode_id or uuid.uuid4().hex, "part": part,
                "client_version": self.client_version, "model_version": model_version,
                "observations": encode_array(np.asarray(observations)),
                "actions": encode_array(np.asarray(actions)),
                "rewards": encode_array(np.asarray(rewards)),
                "terminated": bool(terminated), "truncated": bool(truncated)}
        if log_probs is not None:
            body["log_probs"] = encode_array(np.asarray(log_probs))
        response = self._send("POST", f"/v1/games/{game}/episodes",
                              content=msgpack.packb(body, use_bin_type=True),
                              headers={"Content-Type": "application/msgpack"})
        return response.json()

    def latest_manifest(self, game: str) -> dict[str, Any] | None:
        """The newest published model's manifest; None when none is published yet."""
        return self._latest(game, None)[1]

    def download_model(self, game: str, cache_dir: str | os.PathLike[str]
                       ) -> tuple[dict[str, Any], Path]:
        """The newest model of ``game``: ``(manifest, path of its .onnx file)``, from the cache
        when its sha256 is unchanged; GatewayError(404) when nothing is published yet."""
        folder = Path(cache_dir) / game
        cached = _read_manifest(folder / LATEST)
        etag = f'"{cached["sha256"]}"' if cached and _intact(folder, cached) else None
        status, manifest = self._latest(game, etag)
        if status == 304 and cached is not None:
            return cached, _model_path(folder, cached)
        if manifest is None:
            raise GatewayError(404, f"no model published for {game} yet")
        if not _intact(folder, manifest):
            self._fetch(game, manifest, folder)
        _write(folder / LATEST, json.dumps(manifest, indent=1).encode())
        return manifest, _model_path(folder, manifest)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------ internals

    def _latest(self, game: str, etag: str | None) -> tuple[int, dict[str, Any] | None]:
        """``(200, manifest)``, ``(304, None)`` if ``etag`` is still current, ``(404, None)``
        when nothing is published."""
        headers = {"If-None-Match": etag} if etag else {}
        response = self._send("GET", f"/v1/games/{game}/model", ok=(200, 304, 404),
                              headers=headers)
        if response.status_code == 404 and "no model" not in _reason(response):
            raise GatewayError(404, _reason(response))
        return response.status_code, response.json() if response.status_code == 200 else None

    def _fetch(self, game: str, manifest: dict[str, Any], folder: Path) -> None:
        """Download a version's bytes, check their sha256, store them in the cache."""
        response = self._send("GET", f"/v1/games/{game}/models/{int(manifest['version'])}")
        digest = hashlib.sha256(response.content).hexdigest()
        if digest != manifest["sha256"]:
            raise GatewayError(response.status_code, f"downloaded model has sha256 {digest}, "
                                                     f"the manifest says {manifest['sha256']}")
        folder.mkdir(parents=True, exist_ok=True)
        _write(_model_path(folder, manifest), response.content)

    def _send(self, method: str, url: str, ok: tuple[int, ...] = (200, 201),
              **kwargs: Any) -> httpx.Response:
        """One request, retried on connection errors and 429/502/503/504 with backoff."""
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                response = self._http.request(method, url, **kwargs)
            except httpx.TransportError as exc:
                if last:
                    raise GatewayError(0, f"{type(exc).__name__}: {exc}") from None
                time.sleep(self._delay(attempt, None))
                continue
            if response.status_code in ok:
                return response
            if response.status_code not in RETRY_STATUSES or last:
                raise GatewayError(response.status_code, _reason(response))
            time.sleep(self._delay(attempt, response.headers.get("retry-after")))
        raise AssertionError("unreachable")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        """Seconds before retry ``attempt + 1``: Retry-After if given, else jittered backoff."""
        if retry_after and retry_after.isdigit():
            return min(float(retry_after), RETRY_AFTER_CAP_S)
        backoff = min(self.max_backoff_s, self.backoff_s * 2 ** attempt)
        return backoff * (0.5 + random.random() / 2)


def _reason(response: httpx.Response) -> str:
    """The ``error`` of a JSON error answer (or the start of the body)."""
    try:
        return str(response.json()["error"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason_phrase


def _model_path(folder: Path, manifest: dict[str, Any]) -> Path:
    """Where a version's model lives in the cache."""
    return folder / f"v{int(manifest['version']):06d}.onnx"


def _intact(folder: Path, manifest: dict[str, Any]) -> bool:
    """Whether the cache holds the manifest's model with the right sha256."""
    try:
        data = _model_path(folder, manifest).read_bytes()
    except OSError:
        return False
    return hashlib.sha256(data).hexdigest() == manifest["sha256"]


def _read_manifest(path: Path) -> dict[str, Any] | None:
    """The cached manifest (None: none, or unreadable)."""
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) and "sha256" in manifest else None


def _write(path: Path, data: bytes) -> None:
    """Write a cache file whole (temp file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def wait_healthy(url: str, timeout_s: float = 60.0,
                 alive: Callable[[], bool] = lambda: True) -> bool:
    """Poll the gateway's ``/healthz`` until it and its Redis answer (True), the time is up or
    ``alive()`` turns false, e.g. the server process exited (False): what a script that
    starts ``msagent serve`` waits on before its clients upload."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and alive():
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    return False
