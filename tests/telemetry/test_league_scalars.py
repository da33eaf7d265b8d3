"""League scalars: what TensorBoard and the progress line get from a league run's view."""

from __future__ import annotations

from msagent.telemetry.formatting import line, rows
from msagent.telemetry.tensorboard import ScalarWriter

VIEW = {
    "population": 7,
    "players": {"main": {"role": "main", "elo": 1310.0, "win_rate": 0.62, "snapshots": 3},
                "main_exploiter": {"role": "main_exploiter", "elo": 1190.0, "win_rate": None,
                                   "snapshots": 1}},
    "pfsp": {"main:10": 0.75, "main_exploiter:4": 0.25},
    "eval": {"bot:random": {"win_rate": 0.97, "games": 400, "wins": 388, "worst_seat": 0.95}},
    "eval_rows": [{"opponent": "bot:random", "seat": 0, "win_rate": 0.99, "games": 200},
                  {"opponent": "bot:random", "seat": 1, "win_rate": 0.95, "games": 200}],
    "nash_conv": {"main": {"player": "main", "version": 12, "nash_conv": 0.25, "time": 1.0}},
}


def test_league_tags_are_written_under_league() -> None:
    tags = dict(ScalarWriter(None).scalars({"env_steps": 10, "league": VIEW}))
    assert tags["league/population"] == 7.0 and tags["league/elo/main"] == 1310.0
    assert tags["league/win_rate/main"] == 0.62 and "league/win_rate/main_exploiter" not in tags
    assert tags["league/pfsp/main:10"] == 0.75 and tags["league/eval/bot:random"] == 0.97
    assert tags["league/nash_conv/main"] == 0.25


def test_progress_shows_players_population_and_per_seat_evaluation() -> None:
    text = line({"league": VIEW})
    assert "population=7" in text and "elo/main=1310" in text
    assert "eval/bot:random/seat0=0.990(200)" in text and "eval/bot:random/seat1=0.950(200)" in text
    labels = dict(rows({"league": VIEW}))
    assert labels["league population"] == "7" and "elo 1310" in labels["main (main)"]
    assert labels["eval vs bot:random"] == "0.97 of 400 games"
    assert "nash_conv/main=0.2500" in text and labels["NashConv main"] == "0.25 (version 12)"
