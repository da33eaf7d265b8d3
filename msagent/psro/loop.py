"""The PSRO loop: solve the meta-game, add best responses, fill the new entries, measure.

The loop knows nothing of how best responses are trained or entries computed: an
:class:`Oracle` (exact or RL) and an :class:`EntryEvaluator` (tree traversal or sampled
matches) do that, so the same loop runs in one process or over a league of services.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from msagent.psro.meta_solvers import MetaSolver
from msagent.psro.state import Entry, IterationRecord, PSROState


@dataclass
class EntryResult:
    """One computed meta-game entry.

    Attributes:
        payoff: Each player's expected payoff.
        halfwidth: 95 % confidence half-width per player (0 when exact).
        games: Games played for it (0 when exact).
    """

    payoff: np.ndarray
    halfwidth: np.ndarray | None = None
    games: int = 0


class Oracle(Protocol):
    """Makes the population's members: the first ones, then best responses."""

    episodes: int
    """Training episodes so far (0 for an exact oracle)."""

    def initial_members(self, state: PSROState) -> list[str]:
        """One first member per population."""

    def best_responses(self, state: PSROState) -> list[str]:
        """One new member per population, best responding to ``state.meta``."""


class EntryEvaluator(Protocol):
    """Computes meta-game entries (exactly, or by playing games)."""

    games: int
    """Evaluation games played so far (0 when exact)."""

    def evaluate(self, state: PSROState, entries: list[Entry]) -> list[EntryResult]:
        """One result per entry, in order."""


NashConv = Callable[[PSROState], "float | None"]
"""NashConv of the current meta-strategy mixture, where the game allows computing it."""


class PSRO:
    """Runs iterations over a :class:`PSROState`; each ends with a solved meta-game."""

    def __init__(self, oracle: Oracle, evaluator: EntryEvaluator, solver: MetaSolver,
                 nash_conv: NashConv | None = None, elapsed_before: float = 0.0) -> None:
        self.oracle, self.evaluator, self.solver = oracle, evaluator, solver
        self.nash_conv = nash_conv or (lambda state: None)
        self._started = time.perf_counter() - elapsed_before

    def start(self, num_players: int, symmetric: bool) -> PSROState:
        """A state with each population's first member, evaluated and solved (iteration 0)."""
        state = PSROState(num_players, symmetric, [[] for _ in range(1 if symmetric else
                                                                      num_players)])
        state.add_members(self.oracle.initial_members(state))
        return self._finish(state, 0)

    def step(self, state: PSROState) -> IterationRecord:
        """One iteration: best responses join, new entries are filled, the meta-game solved."""
        state.add_members(self.oracle.best_responses(state))
        self._finish(state, state.iteration + 1)
        return state.history[-1]

    def _finish(self, state: PSROState, iteration: int) -> PSROState:
        """Fill the missing entries, solve, measure and record."""
        missing = state.missing()
        for entry, result in zip(missing, self.evaluator.evaluate(state, missing)):
            state.fill(entry, result.payoff, result.halfwidth, result.games)
        state.meta = self._solve(state)
        record = IterationRecord(
            iteration, state.sizes(), [m.tolist() for m in state.meta], self.nash_conv(state),
            time.perf_counter() - self._started, self.oracle.episodes, self.evaluator.games)
        state.history.append(record)
        return state

    def _solve(self, state: PSROState) -> list[np.ndarray]:
        """The meta-strategy: one distribution per population."""
        solved = self.solver(state.meta_game())
        return [solved[0]] if state.symmetric else list(solved)


def seat_weights(state: PSROState, seat: int) -> np.ndarray:
    """The meta-strategy over the members that may sit in ``seat``."""
    return state.meta[0 if state.symmetric else seat]
