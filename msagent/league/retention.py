"""Which frozen snapshots a long league may stop keeping: retention rules over its history.

A snapshot is kept while the league may still draw it or a rule names it: a player's parent
(what it continues from) and first snapshot (what an exploiter resets to), the members of the
league's mixture, any snapshot some player's PFSP draws with at least ``min_draw``
probability, each player's newest ``keep_last``, every ``keep_every``-th of a player's, and
any rated above ``keep_elo_above``. The others are retired: never drawn again, their rows and
results kept, their weights deleted after a grace period (a worker may hold a match drawn
just before).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from msagent.league.league import League


@dataclass(frozen=True)
class RetentionSettings:
    """The rules (see the module docstring).

    Attributes:
        keep_last: Each player's newest snapshots kept (at least 1).
        keep_every: Every k-th snapshot of each player kept, its first included (0: none).
        keep_elo_above: Snapshots with an Elo above this kept (None: no rating rule).
        min_draw: A snapshot some player's PFSP draws with at least this probability is kept.
        grace_s: Seconds between a snapshot's retirement and the deletion of its weights.
    """

    keep_last: int = 10
    keep_every: int = 0
    keep_elo_above: float | None = None
    min_draw: float = 0.01
    grace_s: float = 60.0


def to_retire(league: League, rules: RetentionSettings) -> list[str]:
    """The participant ids of the snapshots no rule keeps, oldest first."""
    if league.psro is not None:
        return []  # PSRO's meta-game needs every member
    kept = _drawn(league, rules.min_draw) | _named(league, rules)
    return [sid for sid in league.historical if sid not in kept]


def _drawn(league: League, min_draw: float) -> set[str]:
    """Snapshots the league may still draw: parents, first snapshots, the mixture's members
    and those a player's PFSP draws often enough."""
    kept = {p.parent for p in league.players.values() if p.parent}
    kept |= {str(p.first_snapshot()) for p in league.players.values() if p.snapshots}
    if league.mixture is not None:
        kept |= {m for seat in league.mixture["seats"] for m in seat}
    for pid in league.players:
        kept |= {s for s, p in league.pfsp_distribution(pid).items() if p >= min_draw}
    return kept


def _named(league: League, rules: RetentionSettings) -> set[str]:
    """Snapshots a keep rule names: each player's newest, every k-th, the highly rated."""
    by_owner: dict[str, list[str]] = {}
    for sid, snap in league.historical.items():
        by_owner.setdefault(snap.owner, []).append(sid)
    kept = set()
    for sids in by_owner.values():
        kept |= set(sids[-max(1, rules.keep_last):])
        if rules.keep_every > 0:
            kept |= set(sids[::rules.keep_every])
    if rules.keep_elo_above is not None:
        kept |= {sid for sid in league.historical
                 if league.elo.rating(sid) > rules.keep_elo_above}
    return kept
