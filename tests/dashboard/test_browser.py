"""The dashboard in a real headless Chromium against run directories that msagent's own
training wrote: ladder, payoff heatmap, lineage, PSRO, live updates, no console errors."""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from msagent.dashboard.serve import BackgroundServer
from msagent.league.payoff import PayoffTable
from msagent.league_db import DATABASE_NAME
from msagent.rundir.feed import RunFeed
from tests.dashboard.browser import browser, open_dashboard, watch_errors, why_no_browser
from tests.dashboard.conftest import feed_state

pytestmark = pytest.mark.skipif(why_no_browser() is not None,
                                reason=f"browser tests: {why_no_browser()}")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One headless Chromium for the module."""
    with browser() as launched:
        yield launched


@pytest.fixture()
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page; the test fails if it logged a console error."""
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    errors = watch_errors(page)
    yield page
    page.close()
    assert errors == [], f"console errors: {errors}"


@pytest.mark.slow
def test_ladder_heatmap_and_lineage_show_the_league(league_run: Path, page: Any) -> None:
    league = feed_state(league_run)["league"]
    with BackgroundServer(league_run) as server:
        open_dashboard(page, server.url)
        rows = page.eval_on_selector_all(
            "#ladder tbody tr", "rows => rows.map(r => [r.dataset.id, +r.children[4].dataset.elo])")
        heatmap = page.evaluate("(() => { const t = document.getElementById('heatmap').data[0];"
                                " return {x: t.x, y: t.y, z: t.z}; })()")
        edges = page.evaluate("document.getElementById('lineage').data"
                              ".flatMap(t => (t.meta && t.meta.edges) || [])")
    participants = ({p["id"] for p in league["players"]} | {h["ref"] for h in league["historical"]}
                    | {pid for a, b, *_ in league["payoff"]["pairs"] for pid in (a, b)})
    assert len(rows) == len(participants) >= 8
    elo = [e for _, e in rows]
    assert elo == sorted(elo, reverse=True)
    assert elo[0] == pytest.approx(max(league["elo"]["ratings"].values()))
    _assert_heatmap_matches(heatmap, league)
    assert heatmap["y"] == [pid for pid, _ in rows if pid in heatmap["y"]]
    expected = {(h["parent"], h["ref"]) for h in league["historical"] if h["parent"]}
    expected |= {(p["parent"], p["id"]) for p in league["players"] if p["parent"]}
    assert expected and expected <= {tuple(e) for e in edges}


def _assert_heatmap_matches(heatmap: dict, league: dict) -> None:
    """Every trusted cell holds the payoff table's win rate; the others are empty."""
    table = PayoffTable()
    table.load_state_dict(league["payoff"])
    checked = 0
    for i, a in enumerate(heatmap["y"]):
        for j, b in enumerate(heatmap["x"]):
            cell = heatmap["z"][i][j]
            w, d, loss = table.counts(a, b)
            if i != j and w + d + loss >= table.min_games:
                assert cell == pytest.approx((w + 0.5 * d) / (w + d + loss)), (a, b)
                checked += 1
            else:
                assert cell is None, (a, b)
    assert checked >= 4


@pytest.mark.slow
def test_the_page_follows_new_match_results(league_run: Path, tmp_path: Path,
                                             page: Any) -> None:
    run = Path(shutil.copytree(league_run, tmp_path / league_run.name))
    state = feed_state(run)
    with BackgroundServer(run) as server:
        open_dashboard(page, server.url)
        renders = page.evaluate("window.dashboard.renders")
        shown = page.inner_text("#matches-count")
        league = _one_more_result(state["league"], "main", "bot:random")
        reported = _one_more_row(run)  # the league database holds the run's every result
        RunFeed(run).write_state({k: v for k, v in state.items()
                                  if k not in ("format", "msagent", "written_s")} | {
                                     "league": league})
        page.wait_for_function(f"window.dashboard.renders > {renders}", timeout=10_000)
        assert page.inner_text("#matches-count") != shown
        assert page.inner_text("#matches-count").startswith(f"{reported:,}")
        newest = page.inner_text("#matches tbody tr:first-child")
        assert "main vs bot:random" in newest


def _one_more_row(run: Path) -> int:
    """The league database after main beat the random bot once more; its result count."""
    with sqlite3.connect(run / DATABASE_NAME) as db:
        row = db.execute("select run_id, generation, seq, time from matches "
                         "order by id desc limit 1").fetchone()
        db.execute("insert into matches (run_id, generation, seq, time, learner, opponent, "
                   "learner_seat, seats, outcome, returns, length, version) values "
                   "(?, ?, ?, ?, 'main', 'bot:random', 0, '[\"main\", \"bot:random\"]', "
                   "1.0, '[1.0, -1.0]', 9, 1)", (row[0], row[1], row[2] + 1, row[3] + 1))
    return row[2] + 1


def _one_more_result(league: dict, a: str, b: str) -> dict:
    """The league state after ``a`` beat ``b`` once more."""
    table = PayoffTable()
    table.load_state_dict(league["payoff"])
    table.record(a, b, 1.0)
    entry = {"time": league["match_log"][-1]["time"] + 1, "seats": [a, b], "learner_seat": 0,
             "outcome": 1.0, "length": 9, "version": 1}
    return {**league, "payoff": table.state_dict(), "reported": league["reported"] + 1,
            "match_log": [*league["match_log"], entry]}


@pytest.mark.slow
def test_nash_conv_shows_beside_the_win_rates(league_run: Path, tmp_path: Path,
                                             page: Any) -> None:
    """Points with the evaluated player's NashConv (as a Kuhn poker league writes them) add a
    line on a right-hand axis of the evaluation chart."""
    run = Path(shutil.copytree(league_run, tmp_path / league_run.name))
    feed = RunFeed(run)
    for value in (0.9, 0.7):
        feed.append({"progress": {}, "eval": {"bot:random": 0.5}, "nash_conv": {"main": value}})
    with BackgroundServer(run) as server:
        open_dashboard(page, server.url)
        traces = page.evaluate("document.getElementById('eval-chart').data"
                               ".map(t => ({name: t.name, y: t.y, axis: t.yaxis}))")
    (nash,) = [t for t in traces if t["name"] == "NashConv main"]
    assert nash["axis"] == "y2" and nash["y"][-2:] == [0.9, 0.7]
    assert all(v is None for v in nash["y"][:-2])  # the league's own points had none
    assert any(t["name"] == "vs bot:random" for t in traces)


@pytest.mark.slow
def test_exploits_show_as_a_table_and_a_chart(league_run: Path, tmp_path: Path,
                                              page: Any) -> None:
    """``msagent exploit``'s history of the run: newest first in the table, one line per
    target in the chart with its interval."""
    run = Path(shutil.copytree(league_run, tmp_path / league_run.name))
    record = {"time": 1.8e9, "target": {"policy": "main", "checkpoint_step": 7},
              "budget": "90 s", "env_steps": 5000, "games": 1000, "mean_return": 0.25,
              "return_interval": [0.2, 0.3], "win_rate": 0.6, "win_interval": [0.57, 0.63],
              "exact": None}
    later = {**record, "time": 1.8e9 + 60, "mean_return": 0.125, "return_interval": [0.1, 0.15]}
    (run / "exploits.jsonl").write_text(json.dumps(record) + "\n" + json.dumps(later) + "\n")
    errors = watch_errors(page)
    with BackgroundServer(run) as server:
        open_dashboard(page, server.url)
        cells = page.evaluate("[...document.querySelectorAll('#exploits tbody tr')]"
                              ".map(tr => [...tr.cells].map(c => c.textContent))")
        traces = page.evaluate("document.getElementById('exploits-chart').data"
                               ".map(t => ({name: t.name, y: t.y, up: t.error_y.array}))")
    assert [c[4] for c in cells] == ["0.1250", "0.2500"] and cells[0][7] == "–"
    assert traces == [{"name": "main", "y": [0.25, 0.125], "up": [pytest.approx(0.05),
                                                                   pytest.approx(0.025)]}]
    assert errors == []


@pytest.mark.slow
def test_payoff_order_by_name(league_run: Path, page: Any) -> None:
    with BackgroundServer(league_run) as server:
        open_dashboard(page, server.url)
        page.select_option("#payoff-order", "name")
        x = page.evaluate("document.getElementById('heatmap').data[0].x")
    assert x == sorted(x)


@pytest.mark.slow
def test_psro_run_shows_nash_conv_and_meta_strategies(psro_run: Path, page: Any) -> None:
    psro = feed_state(psro_run)["psro"]
    with BackgroundServer(psro_run.parent) as server:
        open_dashboard(page, server.url)
        nash = page.evaluate("document.getElementById('nashconv-chart').data[0].y")
        bars = page.evaluate("[...document.querySelectorAll('#meta-charts > div')]"
                             ".map(d => d.data.map(t => [t.name, t.y]))")
        assert page.is_hidden("#ladder-section")
    assert nash == pytest.approx([r["nash_conv"] for r in psro["history"]])
    assert len(bars) == len(psro["populations"])
    for k, population in enumerate(bars):
        assert [name for name, _ in population] == psro["populations"][k]
        last = [y[-1] for _, y in population]
        assert last == pytest.approx(psro["history"][-1]["meta"][k])
        assert math.isclose(sum(last), 1.0, rel_tol=1e-6)


@pytest.mark.slow
def test_a_missing_run_directory_is_a_clear_page(tmp_path: Path, page: Any) -> None:
    with BackgroundServer(tmp_path / "runs") as server:
        open_dashboard(page, server.url)
        message = page.inner_text("#message")
        (tmp_path / "runs").mkdir()
        page.wait_for_function("document.getElementById('message').textContent"
                               ".includes('No msagent run')", timeout=10_000)
    assert "does not exist (yet)" in message


def test_a_half_written_run_shows_its_warnings(tmp_path: Path, page: Any) -> None:
    from msagent.rundir import RunDir

    run = RunDir.create(tmp_path, "half")
    (run.path / "feed").mkdir()
    (run.path / "feed" / "state.json").write_text('{"format": 1, "league": {"pla')
    with BackgroundServer(run.path) as server:
        open_dashboard(page, server.url)
        warnings = page.inner_text("#warnings")
        assert page.is_hidden("#ladder-section")
    assert "state.json is unreadable" in warnings
    assert json.loads((run.path / ".msagent-run").read_text())["name"] == "half"
