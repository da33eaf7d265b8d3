"""The evaluator: an env worker that writes no fragments. It plays a player's newest
parameters against fixed opponents (bots, snapshots), alternating seats, and keeps the results
for the driver (win rates against wall time) and the league (bots join the payoff table)."""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass, field
from typing import Any

from msagent.envs.bots import load_bots
from msagent.envs.match_collector import MatchCollector
from msagent.envs.teams import num_sides
from msagent.runtime import current_instance, register
from msagent.services.env_worker import Acting
from msagent.services.evaluator.judge_watch import JudgeWatch
from msagent.services.env_worker import report_results
from msagent.services.looping import Looping
from msagent.services.evaluator.nash_conv_watch import NashConvWatch
from msagent.services.evaluator.snapshot_average import SnapshotAverage
from msagent.user_scripts import build_policy, game_action_space, game_factory
from msagent.vocabulary import EpisodeResult, Match, PolicyRef, PolicyScripts

_log = logging.getLogger("msagent.evaluator")


@dataclass
class EvaluatorSettings:
    """Who is evaluated against whom, and how.

    Attributes:
        scripts: The user's env and agent scripts.
        player: The trainable player evaluated (its newest parameters).
        opponents: Participant ids to play against (``"bot:random"``, ``"main:40"``).
        bots: Bot name -> script path.
        num_envs: Games played side by side.
        deterministic: Act with the most likely legal action instead of sampling.
        report_to_league: Also report the games to ``LeagueService`` (bots join its payoff).
        pause_s: Rest between rounds of 16 steps.
        average_snapshots: Above 1, play the mean of the player's newest this many league
            snapshots instead of its newest parameters (never reported to the league, whose
            payoff is about the player itself).
    """

    scripts: PolicyScripts
    player: str
    opponents: list[str]
    bots: dict[str, str] = field(default_factory=dict)
    num_envs: int = 8
    deterministic: bool = True
    report_to_league: bool = True
    pause_s: float = 0.5
    """Rest between rounds of 16 steps, so evaluation takes little CPU from training."""
    average_snapshots: int = 1
    nash_conv_every_s: float = 0.0
    """Above 0, on a sequential OpenSpiel game small enough for exact tables: the player's
    NashConv (its policy in every seat, sampling) at most this often, when its version moved."""
    nash_conv_max_histories: int = 500_000
    """Larger games get no live NashConv (their tree would take too much memory)."""
    judge: str = ""
    """A judge script (``msagent.envs.judge``): the player's losing-move share per seat."""
    judge_every_s: float = 30.0
    """Least time between two exams of the judge."""


def evaluation_matches(player: str, opponents: list[str], seats: int = 2):
    """Endless matches: each opponent in turn, the player in each seat in turn."""
    refs = [PolicyRef.parse(o) for o in opponents]
    for seat, opponent in itertools.cycle([(s, o) for o in refs for s in range(seats)]):
        chosen = [opponent] * seats
        chosen[seat] = PolicyRef.player(player)
        yield Match(tuple(chosen), seat)


class Evaluator(Looping):
    """Plays evaluation games until stopped; ``drain`` hands out the finished games."""

    def __init__(self, settings: EvaluatorSettings) -> None:
        super().__init__()
        self.s = settings
        self.service, self.index = current_instance()
        self._results: list[EpisodeResult] = []
        self._nash_convs: list[dict[str, Any]] = []
        self._judged: list[dict[str, Any]] = []
        self._notes: list[str] = []
        self._env_errors = 0

    @register(concurrent=True)
    def drain(self) -> dict[str, Any]:
        """The games finished, the NashConvs measured and the judge's exams since the last
        drain, what the user should know (once), and the error if the loop failed."""
        with self._lock:
            out, self._results = self._results, []
            measured, self._nash_convs = self._nash_convs, []
            judged, self._judged = self._judged, []
            notes, self._notes = self._notes, []
        return {"results": out, "nash_conv": measured, "judged": judged, "notes": notes,
                "error": self.error}

    def _loop(self) -> None:
        """Follow the player's parameters; play; keep and report the results."""
        sc, seed = self.s.scripts, self.s.scripts.seed + 7919 * (self.index + 1)

        def build(policy_id: str) -> Any:
            return build_policy(sc.env_script, sc.agent_for(policy_id), sc.env_params, seed)

        bots = load_bots(self.s.bots, lambda: game_action_space(sc.env_script, sc.env_params),
                         seed)
        acting = Acting([self.s.player], build, bots, 4, False,
                        deterministic=self.s.deterministic)
        acting.stop = self._stop
        if self.s.average_snapshots > 1:
            acting.follow_with(self.s.player, SnapshotAverage(build(self.s.player), self.s.player,
                                                              self.s.average_snapshots))
        acting.wait_for(self.s.player, 1)
        make = game_factory(sc.env_script, sc.env_params)
        games = [make() for _ in range(self.s.num_envs if self.s.opponents else 1)]
        probe = NashConvWatch.for_game(self.s, games[0])
        judge = JudgeWatch.for_settings(self.s)
        collector = self._collector(games, acting, seed, make) if self.s.opponents else None
        if collector is None:
            games[0].close()
        while not self._stop.is_set():
            if collector is not None:
                self._play(collector)
            if probe is not None:
                found = probe.measure(*acting.held(self.s.player))
                with self._lock:
                    self._nash_convs.extend(found)
                    self._notes.extend(probe.take_notes())
            if judge is not None:
                found = judge.measure(*acting.held(self.s.player))
                with self._lock:
                    self._judged.extend(found)
            self._stop.wait(self.s.pause_s)
            acting.refresh()

    def _collector(self, games: list[Any], acting: Acting, seed: int,
                   make: Any) -> MatchCollector:
        """The games against the opponents, side by side (a game whose env raises is dropped
        and its env rebuilt with ``make``)."""
        matches = evaluation_matches(self.s.player, self.s.opponents, num_sides(games[0]))
        return MatchCollector(games, acting, lambda k: next(matches), 16, seed, remake=make)

    def _play(self, collector: MatchCollector) -> None:
        """One round of 16 steps; keep (and report) the finished games; note the first env
        error (the game dropped), log every one."""
        collector.collect()
        results = collector.take_results()
        errors = collector.take_env_errors()
        for error in errors:
            _log.warning("env error: %s (the game is dropped, its env rebuilt)", error)
        with self._lock:
            self._results.extend(results)
            if errors and not self._env_errors:
                self._notes.append(f"env error: {errors[0]} (the game is dropped, its env "
                                   "rebuilt; later ones are only logged)")
            self._env_errors += len(errors)
        if self.s.report_to_league and self.s.average_snapshots <= 1:
            report_results(results)
