"""The league's state mirrored to a real Redis (when the run's model pool is Redis)."""

from __future__ import annotations

from msagent.league import LeagueSettings
from msagent.services.league import LeagueService, read_league
from msagent.vocabulary import EpisodeResult, ModelKey


def test_the_league_state_is_mirrored_to_redis_under_the_run_namespace(redis_url: str) -> None:
    service = LeagueService(LeagueSettings(), seed=0, mirror_url=redis_url, namespace="run-a")
    service.league.add_snapshot("main", ModelKey("main", 1), 0)
    result = EpisodeResult(1.0, 9, ModelKey("main", 2), outcome=1.0,
                           match=service.league.next_match("main"))
    service.report([result])  # the first report writes at once
    mirrored = read_league(redis_url, "run-a")
    assert mirrored is not None and mirrored["players"][0]["id"] == "main"
    assert [h["ref"] for h in mirrored["historical"]] == ["main:1"]
    assert read_league(redis_url, "run-b") is None  # another run's key is its own
    assert service.state_dict() == read_league(redis_url, "run-a")  # a checkpoint refreshes it


def test_no_mirror_without_a_redis_url() -> None:
    assert LeagueService(LeagueSettings(), seed=0, mirror_url="").mirror is None
