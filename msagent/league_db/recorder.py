"""``LeagueRecorder``: what the league service writes to the league database, and when.

Results are written before the league service answers the worker that reported them (one
transaction per report call, ~35 µs on SQLite), so an acknowledged result survives a killed
league service or driver. Ratings are derived from the results: their history is written at
most every ``RATINGS_EVERY_S`` (the newest values of every participant whose games were
reported since), with the next results, and whenever the league's state is checkpointed. A
run made before the database existed has its checkpointed state (snapshots, players, the
match log it kept) written in once, at its first resume.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from msagent.league import League
from msagent.league_db import rows, schema
from msagent.league_db.database import LeagueDatabase
from msagent.vocabulary import EpisodeResult, PolicyRef

RATINGS_EVERY_S = 1.0
"""Seconds between two rows of a participant's rating history (a row per report call at
hundreds of calls a second would double the writes for nothing a chart shows)."""


@dataclass(frozen=True)
class DatabaseSettings:
    """Where and as what a run writes its league history.

    Attributes:
        url: The database (``sqlite:///RUN_DIR/league.db`` or a PostgreSQL URL).
        run_id: The run's id (rows of several runs may share a database).
        name: The run's name.
        config: The run's config as written (TOML), kept with the run's row.
        generation: 0 for a fresh run, one more per resume.
        resumed_step: The checkpoint a resume continues from (None: a fresh run).
    """

    url: str
    run_id: str
    name: str
    config: str = ""
    generation: int = 0
    resumed_step: int | None = None


class LeagueRecorder:
    """Writes a league's players, snapshots, results and ratings as they happen."""

    def __init__(self, settings: DatabaseSettings, league: League,
                 state: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.db = LeagueDatabase(settings.url, settings.run_id)
        self.db.start(settings.name, settings.config, settings.generation,
                      settings.resumed_step, league.reported)
        if state is not None and self.db.count(schema.snapshots) == 0 \
                and self.db.count(schema.matches) == 0:
            self._import(league, state)
        now = time.time()
        self.db.record_players([rows.player_row(p, now) for p in league.players.values()])
        self._touched: set[str] = set()
        self._ratings_due = 0.0

    def results(self, league: League, accepted: list[EpisodeResult]) -> None:
        """A batch of results the league accepted (in order), committed with the ratings
        history when it is due."""
        if not accepted:
            return
        now, first = time.time(), league.reported - len(accepted) + 1
        matches = [rows.match_row(r, now, first + i, self.settings.generation)
                   for i, r in enumerate(accepted)]
        self._touched.update(pid for r in accepted for pid in rows.participants_of(r))
        self.db.record_results(matches, self._due_ratings(league, now))

    def checkpoint(self, step: int, reported: int, versions: dict[str, int]) -> None:
        """A checkpoint the driver wrote: its step, the league's result count (the cut) and
        each player's saved version."""
        self.db.upsert(schema.checkpoints, [{
            "generation": self.settings.generation, "step": step, "time": time.time(),
            "reported": reported, "versions": versions}], ("generation", "step"))

    def evaluations(self, results: list[EpisodeResult], measures: list[dict[str, Any]]) -> None:
        """The evaluator's games and NashConv measures since the last call."""
        now, generation = time.time(), self.settings.generation
        self.db.insert(schema.evaluations, [rows.evaluation_row(r, now, generation)
                                            for r in results])
        self.db.insert(schema.nash_convs, [rows.nash_conv_row(m) for m in measures])

    def psro(self, league: League) -> None:
        """PSRO's iterations as they stand (an iteration's NashConv arrives after it)."""
        if league.psro is not None:
            self.db.upsert(schema.psro_iterations, [
                asdict(r) for r in league.psro.state.history], ("iteration",))

    def deleted(self, participants: list[str]) -> None:
        """Snapshots whose weights retention deleted."""
        self.db.mark_deleted(participants)

    def flush_ratings(self, league: League) -> None:
        """Write the ratings of every participant reported since the last rows (a checkpoint)."""
        self._ratings_due = 0.0
        self.db.record_results([], self._due_ratings(league, time.time()))

    def _due_ratings(self, league: League, now: float) -> list[dict[str, Any]]:
        """The rating rows to write now (none until ``RATINGS_EVERY_S`` has passed)."""
        if now < self._ratings_due or not self._touched:
            return []
        out, self._touched = rows.rating_rows(league, self._touched, now), set()
        self._ratings_due = now + RATINGS_EVERY_S
        return out

    def snapshot(self, league: League, ref: PolicyRef, updates: int) -> None:
        """A snapshot the league just added, and its player as the snapshot left it."""
        player = league.players.get(ref.name)
        self.db.record_snapshot(
            rows.snapshot_row(league.historical[str(ref)], updates, self.settings.generation),
            None if player is None else rows.player_row(player, time.time()))

    def close(self) -> None:
        """Release the database's connections."""
        self.db.close()

    def _import(self, league: League, state: dict[str, Any]) -> None:
        """A run from before the database: its snapshots, and the matches its capped match
        log kept (sequence numbers counted back from the result count), written in once."""
        for snap in league.historical.values():
            owner = league.players.get(snap.owner)
            self.db.record_snapshot(rows.snapshot_row(snap, None, 0), None if owner is None
                                    else rows.player_row(owner, time.time()))
        log = state.get("match_log", [])
        first = int(state.get("reported", len(log))) - len(log) + 1
        self.db.record_results([rows.logged_match_row(e, first + i) for i, e in
                                enumerate(log)], [])
