"""The league's answer as a mixture: the exact two-seat meta-game among a league's frozen
snapshots on a small sequential OpenSpiel game, grown one snapshot at a time, solved by a
meta-solver into one distribution per seat, and that mixture's NashConv.

A league's payoff table only holds games of its learning players against their opponents
(snapshots never meet), so it cannot be solved as it is; on a game small enough for exact
tables every entry is computed exactly instead, as exact PSRO does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from msagent.psro.meta_solvers import MetaSolver
from msagent.psro.neural import NetworkTables


class ExactMetaGame:
    """Members (snapshot ids) and the exact returns of every pairing, seat 0 against seat 1.

    ``payoffs[s][i, j]`` is seat ``s``'s expected return when member ``i`` plays seat 0 and
    member ``j`` seat 1, as the meta-solvers take it.

    Args:
        tables: The members as tables over the game's information states.
    """

    def __init__(self, tables: NetworkTables) -> None:
        if tables.tree.num_players != 2:
            raise ValueError(f"the league's mixture needs a two-seat game, this one has "
                             f"{tables.tree.num_players}")
        self.tables = tables
        self.members: list[str] = []
        self.payoffs = np.zeros((2, 0, 0))
        self.solved = False
        """Whether :meth:`solve` ran since the members last changed."""

    def keep(self, members: Sequence[str]) -> int:
        """Drop the members not in ``members`` (older snapshots past the cap); how many."""
        wanted = set(members)
        kept = [i for i, m in enumerate(self.members) if m in wanted]
        dropped = len(self.members) - len(kept)
        if dropped:
            self.members = [self.members[i] for i in kept]
            self.payoffs = self.payoffs[:, kept][:, :, kept]
            self.solved = False
        return dropped

    def add(self, members: Sequence[str]) -> int:
        """Add the members not yet in the game (their entries against every member); how many
        were new."""
        new = [m for m in dict.fromkeys(members) if m not in self.members]
        for member in new:
            self._add(member)
        self.solved = self.solved and not new
        return len(new)

    def _add(self, member: str) -> None:
        """One new row and column: the member against every member, in both seats."""
        n, members = len(self.members), [*self.members, member]
        grown = np.zeros((2, n + 1, n + 1))
        grown[:, :n, :n] = self.payoffs
        for other in range(n + 1):
            grown[:, n, other] = self.tables.entry([member, members[other]])
            grown[:, other, n] = self.tables.entry([members[other], member])
        self.members, self.payoffs = members, grown  # both or neither, if a pull fails

    def solve(self, solver: MetaSolver) -> list[np.ndarray]:
        """One distribution over the members per seat."""
        if not self.members:
            raise ValueError("the league's meta-game has no members yet")
        self.solved = True
        return [np.asarray(m, dtype=float) for m in solver(self.payoffs)]

    def nash_conv(self, metas: Sequence[np.ndarray]) -> float:
        """NashConv of seat ``s`` playing the members mixed by ``metas[s]``."""
        return self.tables.nash_conv([self.members, self.members], metas)

    def tables_of(self, metas: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The mixture as one behavioural table per seat (what an export writes)."""
        return self.tables.mixture([self.members, self.members], metas)


def members_and_weights(record: dict[str, Any]) -> tuple[list[str], list[list[float]]]:
    """A :func:`mixture_record`'s snapshots (sorted) and each seat's weight on each of them
    (0 off its support): what playing or writing the mixture needs."""
    members = sorted({m for seat in record["seats"] for m in seat})
    return members, [[seat.get(m, 0.0) for m in members] for seat in record["seats"]]


def mixture_record(members: Sequence[str], metas: Sequence[np.ndarray], nash_conv: float,
                   time_s: float, keep: float = 1e-4) -> dict[str, Any]:
    """The mixture as plain data: per seat, the members with weight above ``keep`` (the
    rest renormalized away), and its NashConv; what the league keeps and the driver shows."""
    seats = []
    for meta in metas:
        weights = {m: float(w) for m, w in zip(members, meta) if w > keep}
        total = sum(weights.values()) or 1.0
        seats.append({m: w / total for m, w in sorted(weights.items(), key=lambda kv: -kv[1])})
    return {"members": len(members), "seats": seats, "nash_conv": float(nash_conv),
            "time": float(time_s)}
