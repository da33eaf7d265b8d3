"""What PSRO knows between iterations: populations, the empirical meta-game, meta-strategies.

The meta-game is a tensor of shape ``(P, n_0, ..., n_{P-1})`` (player ``p``'s expected payoff
when each seat ``q`` plays member ``i_q`` of its population), NaN where not computed yet. A
symmetric game keeps one population for every seat. The state round-trips through plain JSON.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Entry = tuple[int, ...]
"""One member index per seat: a cell of the meta-game."""


@dataclass
class IterationRecord:
    """What one PSRO iteration produced, for logs, curves and the checkpoint.

    Attributes:
        iteration: 0 for the initial population, then 1, 2, ...
        sizes: Population sizes after the iteration.
        meta: The meta-strategy (one distribution per population) solved at its end.
        nash_conv: NashConv of the meta-strategy mixture (None where not computable).
        wall_s: Seconds since the start of the run (over resumes).
        episodes: Training episodes of the oracles so far (0 for exact oracles).
        eval_games: Evaluation games played so far (0 for exact evaluation).
    """

    iteration: int
    sizes: list[int]
    meta: list[list[float]]
    nash_conv: float | None
    wall_s: float
    episodes: int = 0
    eval_games: int = 0


@dataclass
class PSROState:
    """Populations, payoffs (with the confidence half-width of each entry) and history.

    Attributes:
        num_players: Seats of the game.
        symmetric: One population plays every seat.
        populations: Member ids, one list per population (one list when symmetric).
        payoffs: The meta-game tensor (NaN: not computed yet).
        halfwidth: 95 % confidence half-width of each entry (0 for exact entries).
        games: Games behind each entry (0 for exact entries).
        meta: The current meta-strategy, one distribution per population.
        history: One record per iteration.
    """

    num_players: int
    symmetric: bool
    populations: list[list[str]]
    payoffs: np.ndarray = field(default_factory=lambda: np.zeros(0))
    halfwidth: np.ndarray = field(default_factory=lambda: np.zeros(0))
    games: np.ndarray = field(default_factory=lambda: np.zeros(0))
    meta: list[np.ndarray] = field(default_factory=list)
    history: list[IterationRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Size the tensors to the populations when they were not given."""
        if self.payoffs.size == 0:
            shape = (self.num_players, *self.sizes())
            self.payoffs = np.full(shape, np.nan)
            self.halfwidth = np.zeros(shape)
            self.games = np.zeros(shape, dtype=np.int64)

    @property
    def iteration(self) -> int:
        """The number of finished iterations (the initial population counts as 0)."""
        return self.history[-1].iteration if self.history else -1

    def population_of(self, seat: int) -> list[str]:
        """The member ids that may sit in ``seat``."""
        return self.populations[0 if self.symmetric else seat]

    def sizes(self) -> list[int]:
        """Population size per seat."""
        return [len(self.population_of(s)) for s in range(self.num_players)]

    def add_members(self, new: list[str]) -> None:
        """Append one member per population, growing the tensors with unknown entries."""
        if len(new) != len(self.populations):
            raise ValueError(f"expected {len(self.populations)} new members, got {len(new)}")
        for population, member in zip(self.populations, new):
            population.append(member)
        pad = [(0, 0)] + [(0, 1)] * self.num_players
        self.payoffs = np.pad(self.payoffs, pad, constant_values=np.nan)
        self.halfwidth = np.pad(self.halfwidth, pad)
        self.games = np.pad(self.games, pad)

    def missing(self) -> list[Entry]:
        """The entries not computed yet (after ``add_members``: the new rows and columns)."""
        unknown = np.isnan(self.payoffs).any(axis=0)
        return [tuple(int(i) for i in e) for e in np.argwhere(unknown)]

    def members(self, entry: Entry) -> tuple[str, ...]:
        """The member ids of an entry, seat by seat."""
        return tuple(self.population_of(s)[i] for s, i in enumerate(entry))

    def fill(self, entry: Entry, payoff: np.ndarray, halfwidth: np.ndarray | None = None,
             games: int = 0) -> None:
        """Record one entry's payoffs (one per player)."""
        payoff = np.asarray(payoff, dtype=float)
        if payoff.shape != (self.num_players,) or not np.isfinite(payoff).all():
            raise ValueError(f"entry {entry}: expected {self.num_players} finite payoffs, "
                             f"got {payoff}")
        index = (slice(None), *entry)
        self.payoffs[index] = payoff
        self.halfwidth[index] = 0.0 if halfwidth is None else halfwidth
        self.games[index] = games

    def meta_game(self) -> np.ndarray:
        """The tensor a meta-solver sees; a symmetric game is averaged over seat orders."""
        if np.isnan(self.payoffs).any():
            raise ValueError(f"the meta-game still misses entries {self.missing()[:5]}")
        if not self.symmetric:
            return self.payoffs.copy()
        return symmetrized(self.payoffs)

    def seat_mixture(self, record: IterationRecord | None = None) -> tuple[list, list]:
        """Each seat's members and meta-strategy, as of ``record``'s iteration (default:
        now)."""
        pops, metas = [], []
        for seat in range(self.num_players):
            k = 0 if self.symmetric else seat
            members = self.population_of(seat)
            pops.append(members if record is None else members[:record.sizes[seat]])
            metas.append(np.asarray(self.meta[k] if record is None else record.meta[k]))
        return pops, metas

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-able data (NaN written as null)."""
        return {
            "num_players": self.num_players, "symmetric": self.symmetric,
            "populations": self.populations,
            "payoffs": _nan_to_none(self.payoffs), "halfwidth": self.halfwidth.tolist(),
            "games": self.games.tolist(), "meta": [m.tolist() for m in self.meta],
            "history": [vars(r) for r in self.history],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PSROState:
        """The state written by :meth:`to_json`."""
        payoffs = np.array(data["payoffs"], dtype=float)
        return cls(data["num_players"], data["symmetric"], data["populations"], payoffs,
                   np.array(data["halfwidth"], dtype=float),
                   np.array(data["games"], dtype=np.int64),
                   [np.array(m, dtype=float) for m in data["meta"]],
                   [IterationRecord(**r) for r in data["history"]])


def symmetrized(payoffs: np.ndarray) -> np.ndarray:
    """Average each player's payoff over the seat permutations of a symmetric game."""
    players = payoffs.shape[0]
    out = np.zeros_like(payoffs)
    perms = list(itertools.permutations(range(players)))
    for perm in perms:
        # Player q sits in seat perm[q]: seat perm[q]'s axis holds q's member.
        for p in range(players):
            out[p] += np.transpose(payoffs[perm[p]], perm)
    return out / len(perms)


def _nan_to_none(array: np.ndarray) -> Any:
    """Nested lists with None for NaN (JSON has no NaN)."""
    return np.where(np.isnan(array), None, array).tolist()
