"""The driver's side of the dashboard feed: every few seconds the run's progress, services and
league state go to ``feed/state.json``, and every ``TIMELINE_EVERY_S`` a timeline point (progress,
every participant's Elo and OpenSkill, the evaluator's win rates) to ``feed/timeline.jsonl``."""

from __future__ import annotations

import logging
import time
from typing import Any

from msagent.rundir import RunDir
from msagent.rundir.feed import RunFeed

log = logging.getLogger("msagent.train")
STATE_EVERY_S = 3.0
TIMELINE_EVERY_S = 10.0
PROGRESS_KEYS = ("env_steps", "steps_per_s", "episodes", "mean_return", "updates",
                 "policy_version", "elapsed_s", "counters", "user")


class FeedWatch:
    """Publishes a run's state for ``msagent dashboard`` (failures are logged, never fatal).

    Args:
        run_dir: The run directory.
        kind: ``"league"``, ``"psro"`` or ``"single"``.
        league_state: Returns the league's ``state_dict()`` (None for runs without a league);
            called with ``True`` for the run's final write, which must not be a cached copy.
        facts: Returns the run's services, replacements and newest checkpoint step.
    """

    def __init__(self, run_dir: RunDir, kind: str, league_state: Any, facts: Any) -> None:
        self.feed = RunFeed(run_dir.path)
        self.kind, self.league_state, self.facts = kind, league_state, facts
        self._next_state = self._next_point = 0.0
        self._league: dict[str, Any] | None = None
        self._failed = False

    def tick(self, snap: dict[str, Any], final: bool = False) -> None:
        """Write what is due (everything when ``final``)."""
        now = time.monotonic()
        try:
            if final or now >= self._next_state:
                self._write_state(snap, final)
                self._next_state = now + STATE_EVERY_S
            if final or now >= self._next_point:
                self.feed.append(self._point(snap))
                self._next_point = now + TIMELINE_EVERY_S
        except Exception:  # the dashboard's feed must never end a training run
            if not self._failed:
                log.exception("could not write the dashboard feed in %s", self.feed.folder)
            self._failed = True

    def _write_state(self, snap: dict[str, Any], final: bool = False) -> None:
        """The state file: progress, facts and (for leagues) the league's state."""
        if self.league_state is not None:
            self._league = without_rng(self.league_state(final))
        state = {"kind": self.kind, "progress": progress_of(snap), **self.facts()}
        if self._league is not None:
            state["league"] = self._league
        if snap.get("league", {}).get("eval_rows"):
            state["eval"] = snap["league"]["eval_rows"]
        if snap.get("league", {}).get("nash_conv"):
            state["nash_conv"] = snap["league"]["nash_conv"]
        self.feed.write_state(state)

    def _point(self, snap: dict[str, Any]) -> dict[str, Any]:
        """One timeline point: progress, ratings of every participant, evaluation win rates."""
        point: dict[str, Any] = {"progress": progress_of(snap)}
        if self._league is not None:
            point["elo"] = self._league["elo"]["ratings"]
            point["openskill"] = self._league["openskill"]["ratings"]
            point["matches"] = self._league.get("reported", 0)
        evals = snap.get("league", {}).get("eval", {})
        if evals:
            point["eval"] = {k: v.get("win_rate") for k, v in evals.items()}
        measures = snap.get("league", {}).get("nash_conv", {})
        if measures:
            point["nash_conv"] = {k: m["nash_conv"] for k, m in measures.items()}
        return point


def progress_of(snap: dict[str, Any]) -> dict[str, Any]:
    """The progress figures of a metrics snapshot that the dashboard shows."""
    return {k: snap.get(k) for k in PROGRESS_KEYS}


def without_rng(state: dict[str, Any]) -> dict[str, Any]:
    """A league state without its random generator's state (of no use to a reader)."""
    return {k: v for k, v in state.items() if k != "rng"}
