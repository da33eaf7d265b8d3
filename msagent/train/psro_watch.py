"""The driver's view of PSRO with the RL oracle: each solved iteration's NashConv (for
sequential OpenSpiel games: the members' networks turned into tables over information states,
mixed by the meta-strategy, measured exactly), its progress line, TensorBoard scalars and
stop rule."""

from __future__ import annotations

import logging
from typing import Any

from msagent.config import TrainConfig
from msagent.psro.neural import NetworkTables, tables_from_scripts
from msagent.psro.state import IterationRecord, PSROState
from msagent.services.inference import pull_weights
from msagent.services.league import LeagueService
from msagent.vocabulary import PolicyRef

log = logging.getLogger("msagent.train")


def tables_for(cfg: TrainConfig, seed: int) -> NetworkTables | None:
    """Members as tables when the game allows it (a small sequential OpenSpiel game)."""
    found = tables_from_scripts(cfg.scripts.env, cfg.scripts.agent, cfg.env, seed,
                                lambda m: pull_weights(PolicyRef.parse(m).key),
                                cfg.league.psro.member_play == "greedy")
    if isinstance(found, NetworkTables):
        return found
    log.warning("PSRO: NashConv is not computed and entries are sampled: %s", found)
    return None


class PSROWatch:
    """Follows the league's PSRO state; measures and reports each newly solved iteration."""

    def __init__(self, cfg: TrainConfig, league_call, scalar) -> None:
        self.spec, self.call, self.scalar = cfg.league.psro, league_call, scalar
        self.meter = tables_for(cfg, cfg.run.seed)
        self.state: PSROState | None = None
        self.reported = -1

    def poll(self) -> None:
        """Fetch the PSRO state; measure and report iterations solved since the last poll."""
        view = self.call(LeagueService.psro_view)
        self.state = PSROState.from_json(view["state"])
        if self.reported < 0:
            self._skip_measured()
        for record in self.state.history[self.reported + 1:]:
            if record.nash_conv is None and self.meter is not None:
                record.nash_conv = self.meter.nash_conv(*self.state.seat_mixture(record))
                self.call(LeagueService.record_nash_conv, record.iteration, record.nash_conv)
            self._report(record, self.br_gap(record))
            self.reported = record.iteration

    def br_gap(self, record: IterationRecord) -> float | None:
        """What exact best responses to the previous mixture gain over the responses the RL
        oracle trained against it (None for iteration 0 or where not computable)."""
        if self.meter is None or record.iteration == 0:
            return None
        state = self.state
        newest = [state.population_of(s)[record.sizes[0 if state.symmetric else s] - 1]
                  for s in range(state.num_players)]
        return self.meter.br_gap(newest, *state.seat_mixture(state.history[record.iteration - 1]))

    def _skip_measured(self) -> None:
        """After a resume: one line for the iterations measured before, not one each."""
        measured = [r for r in self.state.history if r.nash_conv is not None]
        if measured and self.meter is not None:
            last = measured[-1]
            print(f"psro resumed at iteration {last.iteration}  NashConv {last.nash_conv:.4f}  "
                  f"br episodes {last.episodes:,}", flush=True)
            self.reported = last.iteration

    def stop_reason(self) -> str | None:
        """``psro_iterations`` or ``nash_conv`` once reached, else None."""
        last = self.last()
        if last is None:
            return None
        if self.spec.nash_conv and last.nash_conv is not None and \
                last.nash_conv <= self.spec.nash_conv:
            return "nash_conv"
        return "psro_iterations" if last.iteration >= self.spec.iterations else None

    def last(self) -> IterationRecord | None:
        """The newest reported iteration."""
        if self.state is None or self.reported < 0:
            return None
        return self.state.history[self.reported]

    def view(self) -> dict[str, Any]:
        """For the progress display."""
        last = self.last()
        return {} if last is None else {"iteration": last.iteration, "nash_conv": last.nash_conv,
                                        "population": last.sizes[0],
                                        "episodes": last.episodes}

    def result(self) -> dict[str, Any]:
        """The PSRO part of the final result."""
        last = self.last()
        return {} if last is None else {"psro": {
            "iterations": last.iteration, "nash_conv": last.nash_conv,
            "population": last.sizes[0], "br_episodes": last.episodes,
            "eval_games": last.eval_games,
            "curve": [[r.iteration, r.episodes, r.nash_conv] for r in self.state.history]}}

    def _report(self, record: IterationRecord, gap: float | None) -> None:
        """Progress line, log line and scalars of one iteration."""
        nash = "n/a" if record.nash_conv is None else f"{record.nash_conv:.4f}"
        gap_text = "" if gap is None else f"  br gap {gap:.4f}"
        print(f"psro iteration {record.iteration:4d}  population "
              f"{'/'.join(map(str, record.sizes))}  "
              f"NashConv {nash}{gap_text}  br episodes {record.episodes:,}  eval games "
              f"{record.eval_games:,}  {record.wall_s:.1f} s", flush=True)
        log.info("psro iteration %d: NashConv %s%s", record.iteration, nash, gap_text)
        if record.nash_conv is not None:
            self.scalar("psro/nash_conv", record.nash_conv, record.episodes)
        if gap is not None:
            self.scalar("psro/br_gap", gap, record.episodes)
        self.scalar("psro/population", float(record.sizes[0]), record.episodes)
