"""``[league.retention]``: which frozen snapshots a long league keeps the weights of (see
:mod:`msagent.league.retention`); the others are retired, their rows and results kept.

Example::

    [league.retention]
    every_s = 60            # look every minute (0: keep every snapshot, the default)
    keep_last = 10          # each player's newest ten
    keep_every = 20         # and every 20th, for the history
    keep_elo_above = 1300   # and any rated above 1300
"""

from __future__ import annotations

from pydantic import Field

from msagent.config.base import Section
from msagent.league.retention import RetentionSettings

_DEFAULT = RetentionSettings()


class RetentionSection(Section):
    """Snapshot retention.

    Attributes:
        every_s: Seconds between two passes (0: never retire a snapshot).
        keep_last: Each player's newest snapshots kept.
        keep_every: Every k-th snapshot of each player kept, its first included (0: none).
        keep_elo_above: Snapshots with an Elo above this kept (unset: no rating rule).
        min_draw: A snapshot some player's PFSP draws with at least this probability is kept
            (so is a player's parent, its first snapshot and the mixture's members).
        grace_s: Seconds between a snapshot's retirement (no new matches) and the deletion
            of its weights (snapshot file and model pool).
    """

    every_s: float = Field(0.0, ge=0)
    keep_last: int = Field(_DEFAULT.keep_last, ge=1)
    keep_every: int = Field(_DEFAULT.keep_every, ge=0)
    keep_elo_above: float | None = None
    min_draw: float = Field(_DEFAULT.min_draw, ge=0, le=1)
    grace_s: float = Field(_DEFAULT.grace_s, ge=0)

    def rules(self) -> RetentionSettings:
        """The rules as the league applies them."""
        return RetentionSettings(self.keep_last, self.keep_every, self.keep_elo_above,
                                 self.min_draw, self.grace_s)
