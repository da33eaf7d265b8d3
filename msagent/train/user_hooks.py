"""The driver's side of the user's hooks (``[callbacks]``, msagent.callbacks): it runs
``on_checkpoint`` and ``on_evaluation`` itself, and gathers the scalars and failures of the
hooks the learners and the league service run, for TensorBoard, the progress line and the
dashboard."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from msagent.callbacks import CallbackError, CheckpointEvent, EvaluationEvent, HookRunner
from msagent.config import TrainConfig
from msagent.services.league import LeagueClient

log = logging.getLogger("msagent.train")

CALLBACK_ERRORS = "callback_errors"
"""The counter of hook failures (the progress line and TensorBoard show it)."""
LEAGUE_EVERY_S = 1.0
"""How often the driver asks the league service for its hooks' scalars."""
EVALUATION_KINDS = ("eval", "nash_conv", "judged")
"""The evaluation figures of a league's view that ``on_evaluation`` is told about."""


class DriverHooks:
    """Runs the driver's hooks and keeps the newest value of every user scalar."""

    def __init__(self, cfg: TrainConfig, league: bool,
                 count: Callable[[str, int], None]) -> None:
        self.runner = HookRunner(cfg.callbacks.settings())
        self.shown, self.count = list(cfg.callbacks.progress), count
        self.scalars: dict[str, float] = {}
        self._league = league and "on_match_result" in self.runner.hooks
        self._next_league = 0.0
        self._evaluated: dict[str, Any] = {}

    def gather(self, learner_stats: dict[str, dict[str, Any]], may_stop: bool = True) -> None:
        """Take the learners' (and now and then the league's) hook scalars and failures."""
        for stats in learner_stats.values():
            self.take(stats.get("user"), may_stop)
        if self._league and time.monotonic() >= self._next_league:
            self._next_league = time.monotonic() + LEAGUE_EVERY_S
            self.take(LeagueClient.user_metrics(), may_stop)

    def take(self, drained: dict[str, Any] | None, may_stop: bool = True) -> None:
        """Merge one process's scalars; report its failures; stop when the settings say so."""
        if not drained:
            return
        self.scalars.update(drained["scalars"])
        for message in drained["errors"]:
            log.warning("%s", message)
            print(message, flush=True)
        if drained["errors"]:
            self.count(CALLBACK_ERRORS, len(drained["errors"]))
        if drained["stop"] and may_stop:
            raise CallbackError(f"{drained['errors'][0]} ([callbacks] on_error = \"stop\")")

    def checkpoint(self, step: int, path: str, may_stop: bool = True) -> None:
        """``on_checkpoint`` for a checkpoint just written."""
        self.runner.fire("on_checkpoint", CheckpointEvent(step, path))
        self.take(self.runner.drain(), may_stop)

    def evaluation(self, view: dict[str, Any] | None) -> None:
        """``on_evaluation`` for each kind of evaluation figure that changed."""
        if not view or "on_evaluation" not in self.runner.hooks:
            return
        for kind in EVALUATION_KINDS:
            figures = view.get(kind)
            if figures and figures != self._evaluated.get(kind):
                self._evaluated[kind] = figures
                self.runner.fire("on_evaluation", EvaluationEvent(kind, dict(figures)))
        self.take(self.runner.drain())

    def view(self) -> dict[str, Any]:
        """The scalars for a metrics snapshot: all (``user``) and those the progress line
        shows (``user_progress``)."""
        return {"user": dict(self.scalars),
                "user_progress": {k: self.scalars[k] for k in self.shown if k in self.scalars}}
