"""PSRO with an RL oracle, as the league's coordinator runs it (pure, no services).

The best response is a trainable league player; its snapshots are the population: one
population whose members play every seat (player ``br``), or one population per seat, each
with its own best response that plays only that seat (``br_0``, ``br_1``, ...). The cycle::

    league snapshots the best responses  -> on_snapshot(player, ref): once every population
                                            has its new member they join, entry tasks queue
    evaluators: next_task() ... report()   -> entries fill (sampled games, with 95 % CI)
    the last entry of the iteration fills -> the meta-game is solved; the best response now
                                             draws opponents from the meta-strategy
    episodes_per_br training games later  -> br_due(player): the league snapshots it again
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from msagent.psro.meta_solvers import MetaSolver, make_solver, resolve_solver
from msagent.psro.state import Entry, IterationRecord, PSROState

TASK_TIMEOUT_S = 300.0
"""An evaluation task not reported after this long is handed out again (its evaluator died)."""


@dataclass(frozen=True)
class PSROSettings:
    """What the coordinator needs of ``[league.psro]``.

    Attributes:
        solver: A registered meta-solver name or ``/abs/path.py:function``.
        solver_params: Keyword arguments of a named solver.
        iterations: Iterations after which no further best response is snapshotted.
        episodes_per_br: Training games of the best response per iteration.
        games_per_entry: Evaluation games per meta-game entry.
        symmetric: One population (the player ``br``) for every seat; else one population and
            one best response (``br_<seat>``) per seat.
        br_init: ``initial``: each best response restarts from the first member's parameters;
            ``newest``: it goes on from the response just frozen (warm start).
    """

    solver: str = "nash"
    solver_params: tuple[tuple[str, Any], ...] = ()
    iterations: int = 50
    episodes_per_br: int = 20_000
    games_per_entry: int = 200
    symmetric: bool = True
    br_init: str = "initial"

    def make_solver(self) -> MetaSolver:
        """The meta-solver these settings name (a user's script is imported here)."""
        path, _, name = self.solver.rpartition(":")
        if path.endswith(".py") and name.isidentifier():
            from msagent.user_scripts import script_function

            return resolve_solver(script_function(path, name))
        return make_solver(self.solver, **dict(self.solver_params))


def br_players(symmetric: bool, seats: int) -> list[str]:
    """The best-response players: ``br``, or ``br_0`` ... ``br_<seats-1>``."""
    return ["br"] if symmetric else [f"br_{s}" for s in range(seats)]


@dataclass(frozen=True)
class EvalTask:
    """Games to play for one meta-game entry: ``seats[s]`` is a member's participant id."""

    task: int
    entry: Entry
    seats: tuple[str, ...]
    games: int


class PSROCoordinator:
    """Population, meta-game, evaluation tasks and the best response's episode budget."""

    def __init__(self, settings: PSROSettings, num_players: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings, self.clock = settings, clock
        self.solver = settings.make_solver()
        self.players = br_players(settings.symmetric, num_players)
        self.state = PSROState(num_players, settings.symmetric,
                               [[] for _ in range(1 if settings.symmetric else num_players)])
        self.queue: deque[EvalTask] = deque()
        self.in_flight: dict[int, tuple[EvalTask, float]] = {}
        self.next_id = self.eval_games = 0
        self.episodes = {p: 0 for p in self.players}
        self.marks = {p: 0 for p in self.players}
        self.pending: dict[str, str] = {}
        self.solved = False
        self.elapsed_before, self.started = 0.0, clock()

    def seat_of(self, player: str) -> int | None:
        """The seat a per-seat best response plays (None when symmetric)."""
        return None if self.settings.symmetric else self.players.index(player)

    def on_snapshot(self, player: str, ref: str) -> None:
        """A best response's snapshot; once every population has its new one, they join and
        their entries are queued."""
        self.pending[player] = ref
        if len(self.pending) == len(self.players):
            self.state.add_members([self.pending.pop(p) for p in self.players])
            self.solved = False
            self._queue_missing()

    def count_episode(self, player: str, n: int = 1) -> None:
        """A best response finished ``n`` training games."""
        self.episodes[player] += n

    def br_due(self, player: str) -> bool:
        """Whether the best response has trained its budget against the current meta-strategy."""
        return (self.solved and player not in self.pending
                and self.state.iteration < self.settings.iterations
                and self.episodes[player] - self.marks[player] >= self.settings.episodes_per_br)

    def distribution(self, seat: int = 0) -> dict[str, float]:
        """Member participant id -> probability under the current meta-strategy for ``seat``
        ({} before the first solve)."""
        if not self.state.meta:
            return {}
        k = 0 if self.settings.symmetric else seat
        return dict(zip(self.state.populations[k], map(float, self.state.meta[k])))

    def total_episodes(self) -> int:
        """Training games of every best response."""
        return sum(self.episodes.values())

    def next_task(self) -> EvalTask | None:
        """An evaluation task (timed-out ones first), or None when there is nothing to play."""
        now = self.clock()
        for task_id, (task, since) in list(self.in_flight.items()):
            if now - since > TASK_TIMEOUT_S:
                self.in_flight[task_id] = (task, now)
                return task
        if not self.queue:
            return None
        task = self.queue.popleft()
        self.in_flight[task.task] = (task, now)
        return task

    def report(self, task_id: int, seat_returns: list[list[float]], exact: bool = False) -> bool:
        """Fill a task's entry from its games' returns per seat (``exact``: one row of exact
        expected returns, no games); False for unknown tasks."""
        task = self.in_flight.pop(task_id, None)
        if task is None:
            return False
        returns = np.asarray(seat_returns, dtype=float).reshape(-1, self.state.num_players)
        if len(returns) == 0 or not np.isfinite(returns).all():
            raise ValueError(f"task {task_id}: expected finite returns of "
                             f"{self.state.num_players} seats, got {seat_returns!r}")
        games = 0 if exact else len(returns)
        halfwidth = 0.0 if exact else 1.96 * returns.std(axis=0, ddof=1 if games > 1 else 0) / \
            np.sqrt(games)
        self.state.fill(task[0].entry, returns.mean(axis=0), halfwidth, games)
        self.eval_games += games
        if not self.state.missing() and not self.solved:
            self._solve()
        return True

    def record_nash_conv(self, iteration: int, value: float) -> None:
        """Attach the NashConv the driver computed to an iteration's record."""
        for record in self.state.history:
            if record.iteration == iteration:
                record.nash_conv = float(value)

    def to_json(self) -> dict[str, Any]:
        """Plain data; tasks in flight are not kept (their entries are queued again on load)."""
        return {"state": self.state.to_json(), "episodes": self.episodes, "marks": self.marks,
                "pending": self.pending, "eval_games": self.eval_games,
                "solved": self.solved, "elapsed_s": self.elapsed()}

    def load_json(self, data: dict[str, Any]) -> None:
        """Continue from :meth:`to_json`'s data."""
        self.state = PSROState.from_json(data["state"])
        if isinstance(data["episodes"], int):  # the first layout: one symmetric best response
            data = {**data, "episodes": {self.players[0]: data["episodes"]},
                    "marks": {self.players[0]: data["episodes_mark"]}, "pending": {}}
        self.episodes = {p: int(n) for p, n in data["episodes"].items()}
        self.marks = {p: int(n) for p, n in data["marks"].items()}
        self.pending = dict(data["pending"])
        self.eval_games, self.solved = int(data["eval_games"]), bool(data["solved"])
        self.elapsed_before, self.started = float(data["elapsed_s"]), self.clock()
        self.queue.clear()
        self.in_flight.clear()
        self._queue_missing()
        if self.state.populations[0] and not self.queue and not self.solved:
            self._solve()  # every entry was in, but the solve failed (a solver that cannot)

    def elapsed(self) -> float:
        """Seconds of PSRO so far, over resumes."""
        return self.elapsed_before + self.clock() - self.started

    def _queue_missing(self) -> None:
        """One task per missing entry."""
        for entry in self.state.missing():
            self.queue.append(EvalTask(self.next_id, entry, self.state.members(entry),
                                       self.settings.games_per_entry))
            self.next_id += 1

    def _solve(self) -> None:
        """Solve the meta-game; the iteration is recorded and the next budget starts."""
        solved = self.solver(self.state.meta_game())
        self.state.meta = [solved[0]] if self.settings.symmetric else list(solved)
        self.state.history.append(IterationRecord(
            len(self.state.history), self.state.sizes(), [m.tolist() for m in self.state.meta],
            None, self.elapsed(), self.total_episodes(), self.eval_games))
        self.marks, self.solved = dict(self.episodes), True
