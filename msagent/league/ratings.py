"""Skill ratings of league participants behind one small protocol: Elo and OpenSkill."""

from __future__ import annotations

from typing import Any, Protocol

from openskill.models import PlackettLuce


class Rating(Protocol):
    """A rating system over participant ids, updated one two-player game at a time."""

    def update(self, a: str, b: str, outcome: float) -> None:
        """Record a game of ``a`` against ``b``; ``outcome`` is +1/0/-1 from ``a``."""

    def rating(self, pid: str) -> float:
        """The rating of ``pid`` (the starting rating if it never played)."""

    def ladder(self) -> list[tuple[str, float]]:
        """Every rated id with its rating, best first."""

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state."""

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the state of :meth:`state_dict`."""


def _score(outcome: float) -> float:
    """The score of an outcome: 1 for a win, 0.5 for a draw, 0 for a loss."""
    return 1.0 if outcome > 0 else 0.0 if outcome < 0 else 0.5


def _sorted_ladder(ratings: dict[str, float]) -> list[tuple[str, float]]:
    """Ratings sorted best first (ties by id)."""
    return sorted(ratings.items(), key=lambda item: (-item[1], item[0]))


class Elo:
    """Elo ratings: expected score ``1 / (1 + 10 ** ((rb - ra) / 400))``, step ``k``."""

    def __init__(self, k: float = 16.0, start: float = 1200.0) -> None:
        self.k = float(k)
        self.start = float(start)
        self._ratings: dict[str, float] = {}

    def expected(self, a: str, b: str) -> float:
        """The expected score of ``a`` against ``b``."""
        return 1.0 / (1.0 + 10.0 ** ((self.rating(b) - self.rating(a)) / 400.0))

    def update(self, a: str, b: str, outcome: float) -> None:
        """Move both ratings by ``k`` times the surprise of the result."""
        delta = self.k * (_score(outcome) - self.expected(a, b))
        ra, rb = self.rating(a), self.rating(b)
        self._ratings[a], self._ratings[b] = ra + delta, rb - delta

    def rating(self, pid: str) -> float:
        """The Elo of ``pid`` (``start`` if it never played)."""
        return self._ratings.get(pid, self.start)

    def ladder(self) -> list[tuple[str, float]]:
        """Every rated id with its Elo, best first."""
        return _sorted_ladder(self._ratings)

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state."""
        return {"k": self.k, "start": self.start, "ratings": dict(self._ratings)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the state of :meth:`state_dict`."""
        self.k, self.start = float(state["k"]), float(state["start"])
        self._ratings = {pid: float(r) for pid, r in state["ratings"].items()}


class OpenSkillRating:
    """OpenSkill (Plackett-Luce) ratings; a participant's rating is its ordinal mu - 3 sigma."""

    def __init__(self) -> None:
        self._model = PlackettLuce()
        self._params: dict[str, tuple[float, float]] = {}

    def update(self, a: str, b: str, outcome: float) -> None:
        """Rate one game; a draw gives both the same rank."""
        ranks = [0, 0] if outcome == 0 else [0, 1] if outcome > 0 else [1, 0]
        [[new_a], [new_b]] = self._model.rate([[self._get(a)], [self._get(b)]], ranks=ranks)
        self._params[a] = (float(new_a.mu), float(new_a.sigma))
        self._params[b] = (float(new_b.mu), float(new_b.sigma))

    def rating(self, pid: str) -> float:
        """The ordinal (mu - 3 sigma) of ``pid``."""
        return float(self._get(pid).ordinal())

    def mu_sigma(self, pid: str) -> tuple[float, float]:
        """The (mu, sigma) of ``pid``."""
        rating = self._get(pid)
        return float(rating.mu), float(rating.sigma)

    def ladder(self) -> list[tuple[str, float]]:
        """Every rated id with its ordinal, best first."""
        return _sorted_ladder({pid: self.rating(pid) for pid in self._params})

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state: ``{id: [mu, sigma]}``."""
        return {"ratings": {pid: list(ms) for pid, ms in self._params.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the state of :meth:`state_dict`."""
        self._params = {pid: (float(mu), float(s)) for pid, (mu, s) in state["ratings"].items()}

    def _get(self, pid: str) -> Any:
        """The model's rating object of ``pid`` (a fresh one if it never played)."""
        if pid not in self._params:
            return self._model.rating(name=pid)
        mu, sigma = self._params[pid]
        return self._model.rating(mu=mu, sigma=sigma, name=pid)
