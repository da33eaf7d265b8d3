"""Win/draw/loss of an evaluated player per opponent and seat, over the newest games.

The evaluator's games arrive in the driver as ``EpisodeResult``s; this board keeps the last
``window`` of each (opponent, seat) pair, so the figures follow the player as it learns.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

from msagent.envs.play import wilson_interval
from msagent.vocabulary import EpisodeResult

class EvalBoard:
    """Outcomes by (opponent, learner seat), the newest ``window`` of each."""

    def __init__(self, window: int = 200) -> None:
        self.window = window
        self._recent: dict[tuple[str, int], deque[float]] = defaultdict(
            lambda: deque(maxlen=self.window))
        self.total = 0

    def add(self, results: list[EpisodeResult]) -> None:
        """Record finished evaluation games."""
        for r in results:
            if r.match is None or r.outcome is None:
                continue
            opponent = str(r.match.opponents()[0])
            self._recent[(opponent, r.match.learner_seat)].append(r.outcome)
            self.total += 1

    def rows(self) -> list[dict[str, Any]]:
        """One row per opponent and seat: games, win/draw/loss rates, Wilson 95% interval."""
        return [_row(opponent, seat, list(outcomes))
                for (opponent, seat), outcomes in sorted(self._recent.items())]

    def win_rates(self) -> dict[str, dict[str, Any]]:
        """Per opponent over both seats: win rate, games, and the worst seat's win rate."""
        out: dict[str, dict[str, Any]] = {}
        for row in self.rows():
            entry = out.setdefault(row["opponent"], {"wins": 0, "games": 0, "worst_seat": 1.0})
            entry["wins"] += row["wins"]
            entry["games"] += row["games"]
            entry["worst_seat"] = min(entry["worst_seat"], row["win_rate"])
        for entry in out.values():
            entry["win_rate"] = entry["wins"] / entry["games"] if entry["games"] else None
        return out


def _row(opponent: str, seat: int, outcomes: list[float]) -> dict[str, Any]:
    """The figures of one (opponent, seat) pair."""
    games = len(outcomes)
    wins, draws = outcomes.count(1.0), outcomes.count(0.0)
    low, high = wilson_interval(wins, games)
    return {"opponent": opponent, "seat": seat, "games": games, "wins": wins,
            "win_rate": wins / games if games else 0.0, "draw_rate": draws / games if games else 0.0,
            "loss_rate": (games - wins - draws) / games if games else 0.0,
            "ci_low": low, "ci_high": high}
