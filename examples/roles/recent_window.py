"""A league role of your own: fictitious play over a sliding window of the newest snapshots.

A player takes it in the TOML (the path is relative to the TOML, like every script)::

    [[league.players]]
    id = "window"
    role = "roles/recent_window.py:RecentWindow"

The class subclasses ``msagent.league.Role`` and overrides what it decides; whatever it leaves
alone keeps the base rule (a snapshot every ``snapshot_every_updates`` updates, or sooner once
it beats its targets; no resets). It reads the league (players, snapshots, payoff table) and
changes nothing; the league checks every opponent it returns is a participant.
"""

from __future__ import annotations

import numpy as np

from msagent.league import LeagueView, Role
from msagent.league.players import Player
from msagent.vocabulary import PolicyRef

WINDOW = 3
"""How many of the newest snapshots (of any player) the role plays against."""


class RecentWindow(Role):
    """Plays one of the newest ``WINDOW`` snapshots uniformly; itself while there are none."""

    def choose_opponent(self, view: LeagueView, player: Player,
                        rng: np.random.Generator) -> PolicyRef:
        """The opponent of one match (the league keeps its snapshots oldest first)."""
        recent = [h.ref for h in view.historical.values()][-WINDOW:]
        if not recent:
            return PolicyRef.player(player.id)
        return recent[int(rng.integers(len(recent)))]
