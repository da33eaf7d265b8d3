"""Dashboard benchmark: page load time of a big league beside the time to read its run directory.

Run: ``python benchmarks/dashboard.py [--snapshots 200] [--matches 10000] [--trials 5]``.

A synthetic league run directory (``msagent.dashboard.synthetic``: ``--snapshots`` frozen
snapshots of three players, every pair played, so ``(snapshots + 3)^2`` payoff cells, and
``--matches`` logged match results, 360 timeline points) is served by ``msagent dashboard``'s
app in this process and opened in a headless Chromium (Debian's ``chromium``, driven by
Playwright). Printed, as medians over ``--trials``:

1. baseline: reading the run directory and building the view the page draws (no rendering,
   no HTTP): ``read_run`` + ``run_view`` + JSON encoding;
2. cold page load: a new browser context (empty cache) from navigation until the page has
   drawn every section (``window.dashboard.ready``), and its split (when plotly.js was
   ready, the view being fetched meanwhile; how long the sections took to draw);
3. warm page load: the same page reloaded in that context (plotly.js from the browser cache);

and the ratio of each load to the baseline. Target: the cold load under 1 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TARGET_S = 1.0


def read_time(path: Path, trials: int) -> tuple[float, int]:
    """Median seconds to read the run and build its view as JSON; the JSON's size."""
    from msagent.dashboard.reader import read_run
    from msagent.dashboard.views import run_view
    from msagent.rundir.feed import plain

    times, size = [], 0
    for _ in range(trials):
        start = time.perf_counter()
        body = json.dumps(plain(run_view(read_run(path), path.name)), allow_nan=False)
        times.append(time.perf_counter() - start)
        size = len(body)
    return statistics.median(times), size


def load_times(url: str, trials: int) -> dict[str, list[float]]:
    """Cold and warm page loads (seconds) and the cold loads' split, per trial."""
    from tests.dashboard.browser import browser, open_dashboard, watch_errors

    out: dict[str, list[float]] = {"cold": [], "warm": [], "script": [], "draw": [], "first": []}
    with browser() as chromium:
        for _ in range(trials):
            context = chromium.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            errors = watch_errors(page)
            start = time.perf_counter()
            open_dashboard(page, url)
            out["cold"].append(time.perf_counter() - start)
            timings = page.evaluate("window.dashboard.timings")
            out["script"].append(page.evaluate("window.dashboard.plotlyAt") / 1000)
            out["draw"].append(sum(timings.values()) / 1000)
            out["first"].append(page.evaluate("window.dashboard.firstContentAt") / 1000)
            for name, ms in timings.items():
                out.setdefault(f"section:{name}", []).append(ms / 1000)
            start = time.perf_counter()
            page.reload()
            page.wait_for_function("window.dashboard && window.dashboard.ready")
            out["warm"].append(time.perf_counter() - start)
            if errors:
                raise SystemExit(f"console errors: {errors}")
            context.close()
    return out


def main() -> None:
    """Make the run, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=200)
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args()
    from msagent.dashboard.serve import BackgroundServer
    from msagent.dashboard.synthetic import write_synthetic_run
    from tests.dashboard.browser import why_no_browser

    if why_no_browser():
        raise SystemExit(f"cannot run: {why_no_browser()}")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_synthetic_run(Path(tmp), args.snapshots, args.matches)
        cells = (args.snapshots + 3) ** 2
        from msagent.dashboard.assets import plotly_js

        print(f"charts: {plotly_js().name} ({plotly_js().stat().st_size / 1e6:.1f} MB)")
        print(f"league: {args.snapshots} snapshots + 3 players, {cells:,} payoff cells, "
              f"{args.matches:,} match results; {args.trials} trials, medians")
        base, size = read_time(path, args.trials)
        print(f"baseline  read run dir + build view (no rendering): {base * 1000:7.1f} ms  "
              f"({size / 1e6:.2f} MB of JSON)")
        with BackgroundServer(path) as server:
            loads = load_times(server.url, args.trials)
    cold, warm = statistics.median(loads["cold"]), statistics.median(loads["warm"])
    print(f"cold page load (empty cache, all sections drawn): {cold * 1000:7.1f} ms  "
          f"= {cold / base:.1f}x the baseline   [plotly.js ready at "
          f"{statistics.median(loads['script']) * 1000:.0f} ms, sections drawn in "
          f"{statistics.median(loads['draw']) * 1000:.0f} ms]")
    print(f"first content (facts, ladder, matches drawn):     "
          f"{statistics.median(loads['first']) * 1000:7.1f} ms after navigation start")
    print("  sections: " + ", ".join(f"{k[8:]} {statistics.median(v) * 1000:.0f} ms"
                                     for k, v in loads.items() if k.startswith("section:")))
    print(f"warm page load (plotly.js cached):                {warm * 1000:7.1f} ms  "
          f"= {warm / base:.1f}x the baseline")
    print(f"target: cold load under {TARGET_S:.0f} s: {'met' if cold < TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    main()
