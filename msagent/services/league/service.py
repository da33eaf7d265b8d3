"""``LeagueService``: the league coordinator as a service (a thin wrapper of msagent.league).

Env workers ask it for matches and report finished games; learners ask it after every update
whether to snapshot or reset; the driver reads its summary and saves its state with every
checkpoint. One lock serialises every call, so the pure ``League`` needs no threads. Every
accepted result, rating change and snapshot is written to the league database
(``msagent.league_db``) before the call returns. With a Redis model pool the state is also
mirrored to Redis (``mirror.py``) for other readers.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from msagent.callbacks import CallbackSettings, HookRunner, MatchEvent
from msagent.league import League, LeagueOrder
from msagent.league.retention import RetentionSettings, to_retire
from msagent.league.settings import LeagueSettings
from msagent.league_db.recorder import DatabaseSettings, LeagueRecorder
from msagent.runtime import register
from msagent.services.league.mirror import LeagueMirror
from msagent.vocabulary import EpisodeResult, Match, ModelKey, PolicyRef

if TYPE_CHECKING:
    from msagent.psro.coordinator import EvalTask


class LeagueService:
    """Serves one run's league; ``state`` (from a checkpoint) continues a resumed league;
    ``database`` (None: none) is where its history is written."""

    def __init__(self, settings: LeagueSettings, seed: int, num_seats: int = 2,
                 state: dict[str, Any] | None = None, mirror_url: str = "",
                 namespace: str = "", callbacks: CallbackSettings | None = None,
                 database: DatabaseSettings | None = None) -> None:
        self.num_seats = num_seats
        self.hooks = HookRunner(callbacks)
        self.league = (League.from_state_dict(settings, state, num_seats=num_seats) if state
                       else League(settings, seed, num_seats=num_seats))
        self._lock = threading.Lock()
        redis_url = mirror_url.startswith(("redis://", "rediss://", "unix://"))
        self.mirror = LeagueMirror(mirror_url, namespace) if redis_url else None
        self.recorder = LeagueRecorder(database, self.league, state) if database else None

    @register(concurrent=True)
    def next_matches(self, player_id: str, n: int = 1) -> list[Match]:
        """``n`` matches for ``player_id`` (workers prefetch a few at a time)."""
        with self._lock:
            return [self.league.next_match(player_id, self.num_seats) for _ in range(n)]

    @register(concurrent=True)
    def report(self, results: list[EpisodeResult]) -> int:
        """Record finished games; how many the league has accepted in all."""
        with self._lock:
            accepted = []
            for result in results:
                before = self.league.reported
                self.league.report(result)
                if self.league.reported > before:
                    accepted.append(result)
                if self.hooks.hooks:
                    self.hooks.fire("on_match_result", match_event(result))
            if self.recorder is not None:
                self.recorder.results(self.league, accepted)  # committed before acknowledged
            if self.mirror is not None:
                self.mirror.maybe_write(self.league.state_dict)
            return self.league.reported

    @register(concurrent=True)
    def on_update(self, player_id: str, updates: int) -> LeagueOrder:
        """Whether the player's learner should snapshot now."""
        with self._lock:
            return self.league.on_update(player_id, updates)

    @register(concurrent=True)
    def add_snapshot(self, player_id: str, key: ModelKey, updates: int) -> LeagueOrder:
        """Add a learner's frozen snapshot to the league; whether (and to what) to reset."""
        with self._lock:
            known = len(self.league.historical)
            order = self.league.add_snapshot(player_id, key, updates)
            if self.recorder is not None and len(self.league.historical) > known:
                self.recorder.snapshot(self.league, PolicyRef.snapshot(key), updates)
            return order

    @register(concurrent=True)
    def next_eval_task(self) -> EvalTask | None:
        """PSRO: games to play for one meta-game entry, or None."""
        with self._lock:
            return self.league.psro.next_task() if self.league.psro is not None else None

    @register(concurrent=True)
    def report_eval(self, task: int, seat_returns: list[list[float]], exact: bool = False) -> bool:
        """PSRO: the returns per seat of a task's games, or its exact expected returns (False:
        the task was not pending)."""
        with self._lock:
            return self.league.psro.report(task, seat_returns, exact)

    @register(concurrent=True)
    def psro_view(self) -> dict[str, Any] | None:
        """PSRO: the state (population, meta-game, history) as plain data, or None."""
        with self._lock:
            return self.league.psro.to_json() if self.league.psro is not None else None

    @register(concurrent=True)
    def record_nash_conv(self, iteration: int, value: float) -> None:
        """PSRO: the NashConv the driver computed for an iteration."""
        with self._lock:
            self.league.psro.record_nash_conv(iteration, value)
            if self.recorder is not None:
                self.recorder.psro(self.league)

    @register(concurrent=True)
    def record_checkpoint(self, step: int, reported: int, versions: dict[str, int]) -> None:
        """Keep in the league database a checkpoint the driver wrote (its cut)."""
        if self.recorder is not None:
            with self._lock:
                self.recorder.checkpoint(step, reported, versions)

    @register(concurrent=True)
    def record_evaluations(self, results: list[EpisodeResult],
                           nash_convs: list[dict[str, Any]]) -> None:
        """Keep in the league database the evaluator's games and NashConv measures."""
        if self.recorder is not None:
            with self._lock:
                self.recorder.evaluations(results, nash_convs)

    @register(concurrent=True)
    def retire(self, rules: RetentionSettings) -> list[ModelKey]:
        """Retire the snapshots no retention rule keeps (never drawn again); the snapshots
        whose weights may now be deleted (retired at least ``rules.grace_s`` ago)."""
        with self._lock:
            self.league.retire(to_retire(self.league, rules))
            due = self.league.due_for_deletion(rules.grace_s)
            return [PolicyRef.parse(sid).key for sid in due]

    @register(concurrent=True)
    def deleted(self, keys: list[ModelKey]) -> None:
        """The weights of these retired snapshots are gone (files and model pool)."""
        ids = [str(PolicyRef.snapshot(k)) for k in keys]
        with self._lock:
            self.league.deleted.update(ids)
            if self.recorder is not None:
                self.recorder.deleted(ids)

    @register(concurrent=True)
    def snapshot_ids(self) -> list[str]:
        """Every snapshot's participant id, oldest first (the mixture's candidates)."""
        with self._lock:
            return self.league.snapshot_ids()

    @register(concurrent=True)
    def record_mixture(self, record: dict[str, Any]) -> None:
        """The mixture of the snapshots the driver solved (kept in the league's state)."""
        with self._lock:
            self.league.record_mixture(record)

    @register(concurrent=True)
    def summary(self) -> dict[str, Any]:
        """Players, ratings, win rates and population size (for the progress display)."""
        with self._lock:
            out = self.league.summary()
            main = next(iter(self.league.players))
            out["pfsp"] = self.league.pfsp_distribution(main)
            return out

    @register(concurrent=True)
    def user_metrics(self) -> dict[str, Any]:
        """The user hooks' scalars, and their failures since the last call."""
        return self.hooks.drain()

    @register(concurrent=True)
    def state_dict(self) -> dict[str, Any]:
        """The league's whole state as plain data (saved with every checkpoint)."""
        with self._lock:
            state = self.league.state_dict()
            if self.recorder is not None:
                self.recorder.flush_ratings(self.league)
                self.recorder.psro(self.league)
            if self.mirror is not None:
                self.mirror.write(state)
            return state


def match_event(result: EpisodeResult) -> MatchEvent:
    """A finished game as the ``on_match_result`` hook sees it: seats, returns, length."""
    seats = (result.match.seats if result.match is not None
             else (result.policy, *((result.opponent,) if result.opponent else ())))
    returns = list(result.seat_returns) or [result.episode_return]
    return MatchEvent([str(ref) for ref in seats], [float(r) for r in returns], result.length)
