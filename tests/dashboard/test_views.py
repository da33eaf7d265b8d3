"""What the dashboard computes from run files: ladder, payoff, lineage, PSRO, tolerance of bad
or foreign files (no browser)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from msagent.dashboard.players import player_labels
from msagent.dashboard.reader import read_run, read_timeline, stamp, thin
from msagent.dashboard.synthetic import synthetic_league, write_synthetic_run
from msagent.dashboard.views import ladder, lineage, payoff, psro, run_view
from msagent.league.payoff import PayoffTable
from msagent.rundir import RunDir
from msagent.rundir.feed import RunFeed


@pytest.fixture(scope="module")
def league() -> dict:
    """A synthetic league of 30 snapshots and 500 matches."""
    return synthetic_league(30, 500, seed=1)


def test_ladder_has_every_participant_best_elo_first(league: dict) -> None:
    rows = ladder(league)
    assert len(rows) == 33
    elo = [r["elo"] for r in rows]
    assert elo == sorted(elo, reverse=True)
    assert {r["kind"] for r in rows} == {"training", "snapshot"}
    by_id = {r["id"]: r for r in rows}
    assert by_id["main:20"]["parent"] is None and by_id["main:40"]["parent"] == "main:20"
    assert by_id["main"]["mu"] is not None and by_id["main"]["ordinal"] < by_id["main"]["mu"]


def test_field_win_rate_sums_every_pair(league: dict) -> None:
    rows = {r["id"]: r for r in ladder(league)}
    wins = games = 0.0
    for a, b, w, d, loss in league["payoff"]["pairs"]:
        if "main:20" in (a, b):
            won = w if a == "main:20" else loss
            wins, games = wins + won + 0.5 * d, games + w + d + loss
    assert rows["main:20"]["win_rate"] == pytest.approx(wins / games)
    assert rows["main:20"]["games"] == pytest.approx(games)


def test_payoff_cells_match_the_payoff_table(league: dict) -> None:
    view = payoff(league)
    table = PayoffTable()
    table.load_state_dict(league["payoff"])
    ids = view["ids"]
    assert ids == [r["id"] for r in ladder(league)]
    for i in range(0, len(ids), 3):
        for j in range(len(ids)):
            w, d, loss = table.counts(ids[i], ids[j])
            n = w + d + loss
            assert view["games"][i][j] == pytest.approx(n, abs=1e-3)
            if n:
                assert view["rate"][i][j] == pytest.approx((w + 0.5 * d) / n)
                assert view["rate"][i][j] + view["rate"][j][i] == pytest.approx(1.0)
            else:
                assert view["rate"][i][j] is None
    assert view["min_games"] == 4


def test_lineage_marks_resets_only(league: dict) -> None:
    view = lineage(league)
    snapshots = [h for h in league["historical"] if h["parent"] is not None]
    edges = {(e["parent"], e["child"]): e["reset"] for e in view["edges"]}
    for h in snapshots:
        assert (h["parent"], h["ref"]) in edges
    resets = {child for (parent, child), reset in edges.items() if reset}
    from_main = {h["ref"] for h in league["historical"]
                 if h["owner"] == "main_exploiter" and (h["parent"] or "").startswith("main:")}
    assert resets and from_main <= resets
    assert all(child.startswith("main_exploiter") for child in resets)


def test_psro_meta_strategy_per_iteration() -> None:
    history = [{"iteration": 0, "meta": [[1.0]], "nash_conv": 0.9},
               {"iteration": 1, "meta": [[0.25, 0.75]], "nash_conv": 0.4},
               {"iteration": 2, "meta": [[0.2, 0.3, 0.5]], "nash_conv": float("nan")}]
    view = psro({"populations": [["a", "b", "c"]], "history": history, "symmetric": True})
    assert view["iterations"] == [0, 1, 2]
    assert view["nash_conv"] == [0.9, 0.4, None]
    weights = np.array(view["populations"][0]["weights"])
    np.testing.assert_allclose(weights, [[1.0, 0.25, 0.2], [0.0, 0.75, 0.3], [0.0, 0.0, 0.5]])
    np.testing.assert_allclose(weights.sum(axis=0), 1.0)


def test_a_missing_run_directory_is_a_warning(tmp_path: Path) -> None:
    view = run_view(read_run(tmp_path / "nope"), "nope")
    assert view["ladder"] is None and view["payoff"] is None
    assert "does not exist" in view["warnings"][0]


def test_a_torn_state_file_falls_back_to_the_newest_checkpoint(tmp_path: Path) -> None:
    league = synthetic_league(6, 40)
    run = RunDir.create(tmp_path, "old")
    run.save_checkpoint(7, {}, {"league": league, "progress": {"env_steps": 1234}})
    (run.path / "feed").mkdir()
    (run.path / "feed" / "state.json").write_text('{"format": 1, "league": {"pla')
    files = read_run(run.path)
    view = run_view(files, run.path.name)
    assert files.source == "checkpoint"
    assert any("state.json is unreadable" in w for w in view["warnings"])
    assert len(view["ladder"]) == 9 and view["facts"]["progress"]["env_steps"] == 1234
    assert view["facts"]["checkpoint"] == 7


def test_a_newer_format_shows_what_it_can(tmp_path: Path) -> None:
    league = synthetic_league(6, 40)
    league["players"] = "a new layout"
    run = RunDir.create(tmp_path, "newer")
    RunFeed(run.path).write_state({"league": league, "kind": "league"})
    state_path = run.path / "feed" / "state.json"
    doc = json.loads(state_path.read_text())
    state_path.write_text(json.dumps({**doc, "format": 99, "msagent": "9.0"}))
    view = run_view(read_run(run.path), run.path.name)
    assert any("format 99" in w for w in view["warnings"])
    assert view["ladder"] is None and any("ladder could not be read" in w
                                          for w in view["warnings"])
    assert len(view["payoff"]["ids"]) == 9  # the payoff table still shows


def test_a_run_without_any_data_says_so(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "empty")
    view = run_view(read_run(run.path), run.path.name)
    assert any("neither its live feed nor a readable checkpoint" in w for w in view["warnings"])
    assert view["facts"]["name"] == "empty"


def test_timeline_skips_a_torn_line_and_thins_long_ones(tmp_path: Path) -> None:
    path = tmp_path / "timeline.jsonl"
    path.write_text('{"t": 1}\n{"t": 2}\n{"t": 3, "elo"')
    warnings: list[str] = []
    assert [p["t"] for p in read_timeline(path, warnings)] == [1, 2]
    assert warnings == []
    points = list(range(10_001))
    kept = thin(points, 2000)
    assert len(kept) == 2000 and kept[0] == 0 and kept[-1] == 10_000


def test_stamp_changes_when_the_feed_is_rewritten(tmp_path: Path) -> None:
    path = write_synthetic_run(tmp_path, 3, 10, points=2)
    before = stamp(path)
    RunFeed(path).append({"progress": {"env_steps": 1}})
    assert stamp(path) != before


MIXED_CONFIG = '''
[scripts]
env = "/x/tictactoe_env.py"
agent = "/x/tictactoe_agent.py"

[algorithm]
lr = 0.001

[[league.players]]
id = "main"
role = "main"

[[league.players]]
id = "main_exploiter"
role = "main_exploiter"
agent = "/x/tictactoe_mlp_agent.py"
algorithm = { script = "/x/algorithms/kl_pg.py" }

[[league.players]]
id = "league_exploiter"
role = "league_exploiter"
count = 2
algorithm = { name = "impala" }
'''


def test_the_ladder_names_each_player_s_network_and_algorithm(league: dict) -> None:
    """From the run's saved config: a player's own agent script and algorithm, else the run's;
    its snapshots show their owner's."""
    league = {**league, "players": league["players"] + [
        {"id": f"league_exploiter_{i}", "role": "league_exploiter"} for i in range(2)]}
    labels = player_labels(MIXED_CONFIG)
    by_id = {r["id"]: r for r in ladder(league, labels)}
    assert by_id["main"]["network"] == by_id["main:20"]["network"] == "tictactoe_agent · ppo"
    assert by_id["main_exploiter"]["network"] == "tictactoe_mlp_agent · kl_pg"
    assert by_id["league_exploiter_1"]["network"] == "tictactoe_agent · impala"
    assert player_labels("not [toml") == {} and player_labels("[scripts]\nagent='a.py'") == {}


def test_the_ladder_gives_each_snapshot_s_weight_in_the_league_s_mixture(league: dict) -> None:
    snaps = [h["ref"] for h in league["historical"]][:2]
    mixed = {**league, "mixture": {"members": 30, "nash_conv": 0.1, "time": 0.0,
                                   "seats": [{snaps[0]: 0.6, snaps[1]: 0.4}, {snaps[1]: 1.0}]}}
    by_id = {r["id"]: r for r in ladder(mixed)}
    assert by_id[snaps[0]]["mixture"] == [0.6, 0.0] and by_id[snaps[1]]["mixture"] == [0.4, 1.0]
    assert by_id["main"]["mixture"] == [0.0, 0.0]  # a player is not a member
    assert all(r["mixture"] is None for r in ladder(league))  # no mixture: no column values


def test_exploits_are_read_from_the_run_s_history(tmp_path: Path) -> None:
    path = write_synthetic_run(tmp_path, 3, 10, points=2)
    before = stamp(path)
    record = {"time": 1.0, "target": {"policy": "main", "checkpoint_step": 7}, "budget": "90 s",
              "env_steps": 5000, "games": 1000, "mean_return": 0.25,
              "return_interval": [0.2, 0.3], "win_rate": 0.6, "win_interval": [0.57, 0.63],
              "exact": {"mean": 0.31}}
    lines = [json.dumps(record), json.dumps({**record, "time": 2.0, "exact": None}), '{"t']
    (path / "exploits.jsonl").write_text("\n".join(lines))
    assert stamp(path) != before  # a new exploit redraws the page
    view = run_view(read_run(path), path.name)
    rows = view["exploits"]
    assert [(r["time"], r["policy"], r["step"], r["exact"]) for r in rows] == [
        (1.0, "main", 7, 0.31), (2.0, "main", 7, None)]
    assert rows[0]["return_interval"] == [0.2, 0.3] and rows[0]["budget"] == "90 s"
    assert run_view(read_run(write_synthetic_run(tmp_path / "b", 3, 10)), "b")["exploits"] is None


def test_the_newest_matches_come_from_the_league_database_beyond_the_match_log(
        tmp_path: Path) -> None:
    path = write_synthetic_run(tmp_path, 6, 50, points=5, database_matches=120_000)
    view = run_view(read_run(path), "x")
    matches = view["matches"]
    assert matches["source"] == "database" and matches["reported"] == 120_000
    assert [m["seq"] for m in matches["newest"]] == list(range(120_000, 119_980, -1))
    assert matches["newest"][0]["seats"] and matches["generations"] == 1
    (path / "league.db").write_bytes(b"not a database")  # unreadable: the state's log, warned
    again = run_view(read_run(path), "x")
    assert again["matches"]["source"] == "state" and again["matches"]["reported"] == 50
    assert any("league database" in w for w in again["warnings"])
