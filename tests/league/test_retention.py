"""Snapshot retention: which snapshots a long league stops keeping, and what stays of them."""

from __future__ import annotations

from msagent.league import League, LeagueSettings, PlayerSpec
from msagent.league.retention import RetentionSettings, to_retire
from msagent.vocabulary import EpisodeResult, Match, ModelKey, PolicyRef
from tests.league.helpers import play


def grown(snapshots: int = 20) -> League:
    """A main agent with ``snapshots`` snapshots (1..n) that beats all but the newest five."""
    now = [0.0]
    league = League(LeagueSettings(players=(PlayerSpec("main", "main"),)), seed=0,
                    clock=lambda: now[0])
    for version in range(1, snapshots + 1):
        league.add_snapshot("main", ModelKey("main", version), version)
    for version in range(1, snapshots - 4):
        play(league, "main", PolicyRef.parse(f"main:{version}"), +1.0, n=30)
    league.now = now  # type: ignore[attr-defined]
    return league


def test_only_snapshots_no_rule_keeps_and_the_league_does_not_draw_are_retired() -> None:
    league = grown()
    rules = RetentionSettings(keep_last=3, keep_every=10, min_draw=0.05)
    retired = to_retire(league, rules)
    drawn = {s for s, p in league.pfsp_distribution("main").items() if p >= 0.05}
    assert drawn == {f"main:{v}" for v in range(16, 21)}  # the five it does not beat
    kept = {"main:1", "main:11"} | drawn  # first (every 10th), the 11th, and the drawn ones
    assert set(retired) == {f"main:{v}" for v in range(1, 21)} - kept
    assert retired == sorted(retired, key=lambda s: int(s.split(":")[1]))  # oldest first
    # min_draw 0 keeps every snapshot PFSP may draw: nothing is retired
    assert len(to_retire(league, RetentionSettings(keep_last=3, min_draw=0.0))) == 0


def test_a_retired_snapshot_is_never_drawn_its_late_results_count_and_a_checkpoint_keeps_it(
) -> None:
    league = grown()
    retired = league.retire(to_retire(league, RetentionSettings(keep_last=3, min_draw=0.05)))
    assert retired and not set(retired) & set(league.historical)
    drawn = {str(s) for _ in range(300) for s in league.next_match("main").seats}
    assert not drawn & set(retired)
    late = Match((PolicyRef.player("main"), PolicyRef.parse(retired[0])))  # drawn before
    before = league.reported
    league.report(EpisodeResult(1.0, 5, ModelKey("main", 30), outcome=1.0, match=late))
    assert league.reported == before + 1  # a game drawn before the retirement still counts
    assert league.due_for_deletion(grace_s=60) == []
    league.now[0] = 61.0  # type: ignore[attr-defined]
    assert league.due_for_deletion(grace_s=60) == retired
    league.deleted.update(retired[:2])
    again = League.from_state_dict(league.settings, league.state_dict())
    assert again.retired == league.retired and again.deleted == set(retired[:2])
    assert league.summary()["retired"] == len(retired)
