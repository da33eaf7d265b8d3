"""Decayed win/draw/loss counts between league participants (AlphaStar's payoff table)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_WINS, _DRAWS, _LOSSES = 0, 1, 2


class PayoffTable:
    """Counts of wins, draws and losses per ordered pair of participant ids.

    Each unordered pair is stored once, so a win of ``a`` over ``b`` is by construction a loss
    of ``b`` to ``a``. Before each new record the pair's counts are multiplied by ``decay``,
    so recent games weigh more.

    Args:
        decay: Factor applied to a pair's counts before each record (1: no decay).
        min_games: Decayed games needed before a win rate is trusted; fewer give ``prior``.
        prior: Win rate reported for pairs with too few games.
    """

    def __init__(self, decay: float = 0.99, min_games: float = 10, prior: float = 0.5) -> None:
        self.decay = float(decay)
        self.min_games = float(min_games)
        self.prior = float(prior)
        self._counts: dict[tuple[str, str], np.ndarray] = {}

    def record(self, a: str, b: str, outcome: float) -> None:
        """Record one game of ``a`` against ``b``; ``outcome`` is +1/0/-1 from ``a``."""
        if a == b:
            raise ValueError(f"a participant cannot be recorded against itself: {a!r}")
        key, flipped = _key(a, b)
        counts = self._counts.setdefault(key, np.zeros(3))
        counts *= self.decay
        sign = -np.sign(outcome) if flipped else np.sign(outcome)
        counts[_WINS if sign > 0 else _LOSSES if sign < 0 else _DRAWS] += 1.0

    def counts(self, a: str, b: str) -> tuple[float, float, float]:
        """Decayed (wins, draws, losses) of ``a`` against ``b``."""
        key, flipped = _key(a, b)
        wins, draws, losses = self._counts.get(key, np.zeros(3))
        return (float(losses), float(draws), float(wins)) if flipped else (
            float(wins), float(draws), float(losses))

    def games(self, a: str, b: str) -> float:
        """Decayed number of games between ``a`` and ``b``."""
        return float(sum(self.counts(a, b)))

    def win_rate(self, a: str, b: str) -> float:
        """(wins + draws/2) / games of ``a`` against ``b``; the prior below ``min_games``."""
        wins, draws, losses = self.counts(a, b)
        games = wins + draws + losses
        if games < self.min_games or games == 0:
            return self.prior
        return (wins + 0.5 * draws) / games

    def win_rates(self, a: str, opponents: Sequence[str]) -> np.ndarray:
        """Win rates of ``a`` against each of ``opponents``."""
        return np.array([self.win_rate(a, b) for b in opponents], dtype=float)

    def matrix(self, ids: Sequence[str]) -> np.ndarray:
        """Win rate of row id against column id (NaN on the diagonal and for unplayed pairs)."""
        out = np.full((len(ids), len(ids)), np.nan)
        for i, a in enumerate(ids):
            for j, b in enumerate(ids):
                if i != j and self.games(a, b) > 0:
                    out[i, j] = self.win_rate(a, b)
        return out

    def participants(self) -> list[str]:
        """Every id that has played, sorted."""
        return sorted({pid for key in self._counts for pid in key})

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state: settings and ``[a, b, wins, draws, losses]`` rows."""
        rows = [[a, b, *map(float, c)] for (a, b), c in sorted(self._counts.items())]
        return {"decay": self.decay, "min_games": self.min_games, "prior": self.prior,
                "pairs": rows}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Replace the counts (and settings) with those of :meth:`state_dict`."""
        self.decay = float(state["decay"])
        self.min_games = float(state["min_games"])
        self.prior = float(state["prior"])
        self._counts = {}
        for a, b, wins, draws, losses in state["pairs"]:
            key, flipped = _key(a, b)
            row = [losses, draws, wins] if flipped else [wins, draws, losses]
            self._counts[key] = np.array(row, dtype=float)


def _key(a: str, b: str) -> tuple[tuple[str, str], bool]:
    """The stored (sorted) key of a pair and whether ``(a, b)`` is its flipped orientation."""
    return ((a, b), False) if a <= b else ((b, a), True)
