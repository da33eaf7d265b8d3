"""Screenshot ``msagent dashboard`` of a run for the README (headless Chromium via Playwright).

    python scripts/dashboard_screenshot.py RUN_DIR OUT.png [--section payoff-section] [--width 1400]

Without ``--section`` the whole page is captured; with it, only that section of the page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    """Serve the run, open it, wait for the first render, capture."""
    from msagent.dashboard.serve import BackgroundServer
    from tests.dashboard.browser import browser, open_dashboard, watch_errors

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--section", action="append", default=[])
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    with BackgroundServer(args.run_dir) as server, browser() as chromium:
        page = chromium.new_page(viewport={"width": args.width, "height": 900})
        errors = watch_errors(page)
        open_dashboard(page, server.url)
        page.wait_for_timeout(500)
        if args.section:
            keep = ",".join(f"'{s}'" for s in args.section)
            page.evaluate(f"document.querySelectorAll('main > section').forEach(s => "
                          f"{{ if (![{keep}].includes(s.id)) s.style.display = 'none'; }})")
        page.screenshot(path=str(args.out), full_page=True)
        if errors:
            raise SystemExit(f"console errors: {errors}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
