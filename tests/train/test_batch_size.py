"""``services.learner.batch_fragments``: the fragments per update a user sets, in a league and
alone (``tests/config/test_ranges.py``: refused in sync mode)."""

from __future__ import annotations

from pathlib import Path

from msagent.train.run_services import RunInfo, stop_started
from msagent.train.wiring import connect_services
from tests.train.league_helpers import league_config

PLAYERS = ("main", "main_exploiter", "league_exploiter")


def learner_batches(cfg) -> tuple[dict[str, int], bool]:
    """Each player's learner's fragments per update, and whether the batch is fixed."""
    services = connect_services(cfg, RunInfo())
    try:
        return ({p: h.call_all("stats")[0]["batch_fragments"]
                 for p, h in services.learners.items()}, services.fixed_batch)
    finally:
        stop_started(services.all())


def test_each_league_player_updates_on_the_configured_batch(
        inline_only: str, tmp_path: Path) -> None:
    batches, fixed = learner_batches(league_config(
        tmp_path, "local", "services.learner.batch_fragments=20"))
    assert batches == {p: 20 for p in PLAYERS} and fixed


def test_by_default_every_league_player_updates_on_the_largest_player_s_round(
        inline_only: str, tmp_path: Path) -> None:
    batches, fixed = learner_batches(league_config(tmp_path, "local"))
    # 12 games: the example's main is home in 10 of every 12 slots (env_share = 10); the
    # exploiters, home in 1 each, update on batches of main's size too (less often, not on
    # tenth-size batches), which stay that size when a worker is lost (async learners)
    assert batches == {"main": 10, "main_exploiter": 10, "league_exploiter": 10} and fixed
