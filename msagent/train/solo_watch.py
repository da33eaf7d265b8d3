"""The driver's view of a single-policy run (a league of one, without a league service): the
same calls as ``LeagueWatch``, so that the driver picks its watch once and never asks which
kind of run it watches."""

from __future__ import annotations

from typing import Any, Protocol

from msagent.rundir import RunDir
from msagent.services.learner import Learner
from msagent.train.run_services import Services


class RunWatch(Protocol):
    """What the driver asks of a run's watch, league or not."""

    kind: str
    """The dashboard feed's kind: ``"single"``, ``"league"`` or ``"psro"``."""

    def poll(self, learner_stats: dict[str, dict[str, Any]]) -> None:
        """Drain what the run's extra services measured."""

    def view(self) -> dict[str, Any]:
        """What the progress display shows under ``league`` (empty: nothing)."""

    def stop_reason(self) -> str | None:
        """A reason of the run's own to stop (PSRO's), or None."""

    def checkpoint(self, run_dir: RunDir, progress: dict[str, Any],
                   run: dict[str, Any]) -> int | None:
        """Write one checkpoint of the run; its step."""

    def restore(self, progress: dict[str, Any]) -> None:
        """Go on from a checkpoint's progress."""

    def result(self, learners: dict[str, dict[str, Any]],
               run_dir: RunDir | None) -> dict[str, Any]:
        """The watch's part of the run's final result."""


class SoloWatch:
    """A single-policy run's watch: nothing to poll; its one learner checkpoints itself."""

    kind = "single"
    feed_state = None
    """No league state for the dashboard feed."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def poll(self, learner_stats: dict[str, dict[str, Any]]) -> None:
        """Nothing beyond the learner, which the driver polls itself."""

    def view(self) -> dict[str, Any]:
        """No league rows."""
        return {}

    def stop_reason(self) -> str | None:
        """No stop criterion beyond the run's own."""
        return None

    def checkpoint(self, run_dir: RunDir, progress: dict[str, Any],
                   run: dict[str, Any]) -> int | None:
        """The learner's checkpoint with the driver's progress (rank 0 of a group writes)."""
        steps = self.services.learner.call_all(Learner.checkpoint, progress, run)
        return next((s for s in steps if s is not None), None)

    def restore(self, progress: dict[str, Any]) -> None:
        """The learner restores itself; the driver restores the metrics."""

    def result(self, learners: dict[str, dict[str, Any]],
               run_dir: RunDir | None) -> dict[str, Any]:
        """Nothing beyond the run's own result."""
        return {}
