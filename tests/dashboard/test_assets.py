"""Which plotly.js the dashboard serves, and the set-up's pinned, checked fetch of the cartesian
bundle (served here from a loopback HTTP server, not the npm registry)."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from msagent.dashboard import assets

SCRIPT = b"/* plotly.js (cartesian) stand-in */ window.Plotly = {};"


def _tarball(member: str, body: bytes) -> bytes:
    """A gzipped tar holding one file, as npm packs a package."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo(member)
        info.size = len(body)
        archive.addfile(info, io.BytesIO(body))
    return out.getvalue()


@pytest.fixture()
def registry() -> Iterator[tuple[str, bytes]]:
    """A loopback server answering every GET with one tarball; ``(url, tarball)``."""
    tarball = _tarball(assets.MEMBER, SCRIPT)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Length", str(len(tarball)))
            self.end_headers()
            self.wfile.write(tarball)

        def log_message(self, *args: object) -> None:
            """Quiet."""

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/bundle.tgz", tarball
    server.shutdown()
    server.server_close()


@pytest.fixture()
def vendor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The vendor folder moved into a temporary directory."""
    monkeypatch.setattr(assets, "VENDOR", tmp_path / "vendor")
    monkeypatch.setattr(assets, "CARTESIAN_FILE", tmp_path / "vendor" / "cartesian.min.js")
    return tmp_path / "vendor"


def test_fetch_checks_the_pinned_integrity(registry: tuple[str, bytes], vendor: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    url, tarball = registry
    monkeypatch.setattr(assets, "CARTESIAN_URL", url)
    monkeypatch.setattr(assets, "CARTESIAN_SHA512",
                        base64.b64encode(hashlib.sha512(tarball).digest()).decode())
    assert assets.plotly_js() == assets.full_bundle()
    path = assets.fetch_cartesian()
    assert path.read_bytes() == SCRIPT and assets.plotly_js() == path


def test_a_download_that_does_not_match_is_refused(registry: tuple[str, bytes], vendor: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = registry
    monkeypatch.setattr(assets, "CARTESIAN_URL", url)
    with pytest.raises(ValueError, match="does not match its pinned sha512"):
        assets.fetch_cartesian()
    assert not assets.CARTESIAN_FILE.exists()
    assert assets.plotly_js() == assets.full_bundle()


def test_the_full_bundle_ships_with_plotly() -> None:
    assert assets.full_bundle().stat().st_size > 3_000_000
