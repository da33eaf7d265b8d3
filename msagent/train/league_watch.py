"""The driver's view of a league run: the league's summary, the evaluator's win rates, league
checkpoints (every player's learner and the league's state in one file) and the final report
(ladder, heatmap, lineage)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from msagent.errors import ConfigError, ServiceDiedError
from msagent.league.report import ladder_text, lineage_text, save_heatmap
from msagent.rundir import RunDir
from msagent.services.league import LeagueService
from msagent.services.learner import Learner, save_league_checkpoint
from msagent.services.looping import Drainable
from msagent.telemetry.evaluation import EvalBoard
from msagent.train.league_plan import evaluated_player
from msagent.train.run_services import Services

log = logging.getLogger("msagent.train")
SUMMARY_EVERY_S = 2.0
LADDER_SHOWN = 30
"""Ladder rows a run's final report prints (the trainable players always; the dashboard and
``msagent league RUN_DIR`` show them all)."""


class LeagueWatch:
    """Polls the league and the evaluator; ``view`` is what the progress display shows."""

    def __init__(self, services: Services, eval_window: int = 200, cfg: Any = None,
                 scalar: Any = None) -> None:
        self.services = services
        self.psro = None
        if cfg is not None and cfg.league.psro is not None:
            from msagent.train.psro_watch import PSROWatch

            self.psro = PSROWatch(cfg, self.call, scalar)
        self.mixture = None
        if cfg is not None and self.psro is None:
            from msagent.train.mixture_watch import MixtureWatch

            self.mixture = MixtureWatch.for_run(cfg, self.call)
        self.board = EvalBoard(eval_window)
        self.evaluated = evaluated_player(cfg) if cfg is not None else None
        """The player the evaluator plays (and measures)."""
        self.nash_convs: list[dict[str, Any]] = []
        """The evaluated player's NashConv measures, oldest first (small OpenSpiel games)."""
        self.judged: list[dict[str, Any]] = []
        """The evaluated player's exams by the judge, oldest first (``msagent.envs.judge``)."""
        self.summary: dict[str, Any] = {}
        self._next_summary = 0.0
        self._state: dict[str, Any] | None = None
        self._state_stamp: tuple[Any, ...] | None = None

    @property
    def kind(self) -> str:
        """The dashboard feed's kind of run."""
        return "psro" if self.psro is not None else "league"

    def stop_reason(self) -> str | None:
        """PSRO's own stop (its iterations or NashConv reached), or None."""
        return self.psro.stop_reason() if self.psro is not None else None

    def poll(self, learner_stats: dict[str, dict[str, Any]]) -> None:
        """Drain the evaluator; refresh the league's summary every few seconds."""
        if self.services.evaluator is not None:
            for drained in self.services.evaluator.call_each(Drainable.drain).values():
                error = drained["error"]
                if error is not None:  # a user's error (a solver that cannot) speaks for itself
                    raise error.rebuild("" if error.user else "the evaluator failed")
                self.board.add(drained["results"])
                self.nash_convs += drained.get("nash_conv", [])
                self._keep(drained["results"], drained.get("nash_conv", []))
                self.judged += drained.get("judged", [])
                for note in drained.get("notes", []):
                    log.warning("evaluator: %s", note)
                    print(f"evaluator: {note}", flush=True)
        if time.monotonic() >= self._next_summary:
            self.summary = self.call(LeagueService.summary)
            self.summary["versions"] = {p: s["version"] for p, s in learner_stats.items()}
            if self.psro is not None:
                self.psro.poll()
            self._poll_mixture()
            self._next_summary = time.monotonic() + SUMMARY_EVERY_S

    def _poll_mixture(self, force: bool = False) -> None:
        """Solve the league's mixture when due (``force``: now); keep its NashConv measure.
        A failure costs only this solve (a pool gone with a failed run: the supervisor names
        the dead service; the last mixture stays)."""
        try:
            measure = self.mixture.poll(force) if self.mixture is not None else None
        except ConfigError as exc:  # a solver that cannot solve this game will not later
            log.warning("league mixture: off for this run: %s", exc)
            self.mixture = None
            return
        except Exception as exc:
            log.warning("league mixture: not solved this time: %s", exc)
            return
        if measure is not None:
            self.nash_convs.append(measure)
            self._keep([], [measure])

    def _keep(self, results: list[Any], measures: list[dict[str, Any]]) -> None:
        """Evaluation games and NashConv measures into the league database."""
        if results or measures:
            self.call(LeagueService.record_evaluations, results, measures)

    def view(self) -> dict[str, Any]:
        """Players (Elo, win rate vs targets, snapshots), population, evaluation win rates."""
        psro = {"psro": self.psro.view()} if self.psro is not None else {}
        return {**self.summary, "eval": self.board.win_rates(), "eval_rows": self.board.rows(),
                "nash_conv": latest_nash_convs(self.nash_convs),
                "judged": self.judged[-1] if self.judged else None, **psro}

    def feed_state(self, fresh: bool = False) -> dict[str, Any]:
        """The league's state for the dashboard feed, fetched again only when the summary says
        it changed (matches, population, rejections, snapshots), when ``fresh`` (the run's
        last write), or always in PSRO runs, whose meta-game moves without matches: a league
        of 10,000 logged matches is not copied across processes every few seconds to say
        nothing new."""
        stamp = None if self.psro is not None else _stamp(self.summary)
        if fresh or self._state is None or stamp is None or stamp != self._state_stamp:
            self._state, self._state_stamp = self.call(LeagueService.state_dict), stamp
        return self._state

    def checkpoint(self, run_dir: RunDir, progress: dict[str, Any], run: dict[str, Any]) -> int:
        """One atomic checkpoint of every learner and the league; its step (total updates).

        One cut: the league's state is read before the learners', so every snapshot and
        update count it holds is at or below the version its learner is saved at; a resumed
        learner's next snapshots then take versions no saved snapshot has (read the other way
        round, a snapshot taken between the two reads was in the league and its version was
        taken again, with other weights, after the resume)."""
        self._poll_mixture(force=True)  # the checkpoint's mixture covers its snapshots
        league = self.call(LeagueService.state_dict)
        parts = {p: h.call_all(Learner.export_state)[0] for p, h in self.services.learners.items()}
        step = sum(part["state"]["counters"]["updates"] for part in parts.values())
        # a resumed run's history goes on
        progress = {**progress, "nash_conv": self.nash_convs, "judged": self.judged}
        saved = save_league_checkpoint(run_dir, step, parts, league, progress, run)
        self.call(LeagueService.record_checkpoint, step, league["reported"], {
            p: part["state"]["counters"]["version"] for p, part in parts.items()})
        return saved

    def restore(self, progress: dict[str, Any]) -> None:
        """Go on from a checkpoint's progress: the NashConv measures and exams before it."""
        self.nash_convs = list(progress.get("nash_conv", []))
        self.judged = list(progress.get("judged", []))

    def result(self, learners: dict[str, dict[str, Any]],
               run_dir: RunDir | None) -> dict[str, Any]:
        """The league part of the final result: players, summary, evaluation, ladder, heatmap."""
        self._poll_mixture(force=True)
        state = self.call(LeagueService.state_dict)
        report = write_report(state, run_dir)
        return {"league": {"players": {p: {"updates": s["updates"], "version": s["version"]}
                                       for p, s in learners.items()},
                           "summary": self.call(LeagueService.summary),
                           "eval": self.board.rows(),
                           "evaluated": self.evaluated,
                           **({"nash_conv": self.nash_convs} if self.nash_convs else {}),
                           **({"judged": self.judged} if self.judged else {}),
                           **({"mixture": state["mixture"]} if "mixture" in state else {}),
                           **report}, **(self.psro.result() if self.psro is not None else {})}

    def call(self, method: Callable[..., Any], *args: Any) -> Any:
        """A call to the league service (its death is named as such)."""
        found = list(self.services.league.call_each(method, *args).values())
        if not found:
            self.services.league.reap()
            raise ServiceDiedError(f"service {self.services.league.name} died")
        return found[0]


def write_report(state: dict[str, Any], run_dir: RunDir | None) -> dict[str, str]:
    """The ladder and lineage as text, and the payoff heatmap's PNG path (in the run dir)."""
    out = {"ladder": ladder_text(state, limit=LADDER_SHOWN), "lineage": lineage_text(state)}
    if run_dir is not None:
        out["heatmap"] = str(save_heatmap(state, run_dir.path / "payoff_heatmap.png"))
    return out


def latest_nash_convs(measures: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each measured player's newest NashConv measure."""
    return {m["player"]: m for m in measures}


def _stamp(summary: dict[str, Any]) -> tuple[Any, ...] | None:
    """What changes whenever the league's state does (None before the first summary)."""
    if not summary:
        return None
    players = summary.get("players", {})
    return (summary.get("matches"), summary.get("population"), summary.get("rejected"),
            tuple((p, s.get("snapshots"), s.get("resets")) for p, s in sorted(players.items())))
