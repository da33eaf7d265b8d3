"""A headless Chromium for the dashboard's browser tests and benchmark: Debian's ``chromium``
driven by Playwright (which cannot download its own browsers here)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The Chromium executable on PATH, or None."""
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def why_no_browser() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if chromium_path() is None:
        return "no Chromium on PATH (scripts/test.sh installs Debian's chromium with apt)"
    return None


@contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium (Playwright's Browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path(), headless=True,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            yield launched
        finally:
            launched.close()


def watch_errors(page: Any) -> list[str]:
    """Console errors and uncaught exceptions of ``page``, as they happen."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def open_dashboard(page: Any, url: str, timeout_ms: float = 30_000) -> None:
    """Load the page and wait until its first render is done."""
    page.goto(url)
    page.wait_for_function("window.dashboard && window.dashboard.ready", timeout=timeout_ms)
