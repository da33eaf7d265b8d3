"""The run's dashboard feed: strict JSON, atomic state, and what a real league run writes."""

from __future__ import annotations

import pytest
import json
from pathlib import Path

from msagent.league.payoff import PayoffTable
from msagent.rundir import RunDir
from msagent.rundir.feed import FEED_FORMAT, RunFeed, plain
from tests.dashboard.conftest import feed_state


def test_plain_turns_non_finite_numbers_into_null() -> None:
    out = plain({"a": float("nan"), "b": [1.0, float("inf"), {"c": -float("inf")}], 3: (2,)})
    assert out == {"a": None, "b": [1.0, None, {"c": None}], "3": [2]}


def test_state_is_strict_json_with_format_and_time(tmp_path: Path) -> None:
    feed = RunFeed(tmp_path, clock=lambda: 12.5)
    feed.write_state({"progress": {"mean_return": float("nan")}})
    feed.append({"x": 1})
    feed.append({"x": 2})
    doc = json.loads(feed.state_path.read_text(), parse_constant=_refuse)
    assert doc["format"] == FEED_FORMAT and doc["written_s"] == 12.5
    assert doc["progress"]["mean_return"] is None
    lines = feed.timeline_path.read_text().splitlines()
    assert [json.loads(line)["x"] for line in lines] == [1, 2]


@pytest.mark.slow
def test_a_league_run_publishes_its_final_league_state(league_run: Path) -> None:
    state = feed_state(league_run)
    checkpoint = RunDir(league_run).latest_checkpoint()
    assert state["kind"] == "league" and "rng" not in state["league"]
    assert state["league"]["payoff"] == checkpoint.state["league"]["payoff"]
    assert state["league"]["reported"] > 0
    assert state["checkpoint"] == checkpoint.step
    assert set(state["services"]) >= {"EnvWorker", "LeagueService", "Evaluator"}
    assert state["progress"]["env_steps"] > 0 and state["eval"]
    table = PayoffTable()
    table.load_state_dict(state["league"]["payoff"])
    assert len(table.participants()) >= 5


@pytest.mark.slow
def test_a_league_run_appends_ratings_over_time(league_run: Path) -> None:
    lines = (league_run / "feed" / "timeline.jsonl").read_text().splitlines()
    points = [json.loads(line) for line in lines]
    assert len(points) >= 2
    assert [p["t"] for p in points] == sorted(p["t"] for p in points)
    assert {"main", "main_exploiter", "league_exploiter"} <= set(points[-1]["elo"])
    assert points[-1]["progress"]["env_steps"] >= points[0]["progress"]["env_steps"]


@pytest.mark.slow
def test_a_psro_run_publishes_each_iteration(psro_run: Path) -> None:
    state = feed_state(psro_run)
    assert state["kind"] == "psro" and state["game"] == "kuhn_poker()"
    assert [r["iteration"] for r in state["psro"]["history"]] == list(range(9))


def _refuse(name: str) -> None:
    """NaN and Infinity are not JSON."""
    raise ValueError(f"non-strict JSON constant {name}")
