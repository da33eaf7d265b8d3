"""``msagent train`` for a config with ``[league.psro]`` and ``oracle = "exact"``: PSRO on an
OpenSpiel game with tabular best responses, NashConv every iteration, checkpoints, resume.

The exact oracle needs no services: each iteration takes milliseconds of tree passes in this
process (handing entries to evaluator processes would cost more than computing them).
"""

from __future__ import annotations

import logging
import math
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from msagent.config import TrainConfig
from msagent.envs.teams import num_sides
from msagent.errors import ConfigError
from msagent.psro.exact_oracle import (ExactEvaluator, ExactOracle, TabularMembers,
                                       mixture_nash_conv)
from msagent.psro.checkpoint import load_psro_checkpoint, member_tensors, restore_members
from msagent.psro.game_tree import build_tree
from msagent.psro.loop import PSRO
from msagent.psro.meta_solvers import MetaSolver
from msagent.psro.state import IterationRecord, PSROState
from msagent.psro.tabular_io import write_policy
from msagent.rundir import RunDir
from msagent.rundir.feed import RunFeed
from msagent.telemetry import log_to_file
from msagent.telemetry.tensorboard import ScalarWriter
from msagent.train.signals import STOP_FILE_REASON, StopFile, StopSignals
from msagent.user_scripts import env_factory, game_factory

log = logging.getLogger("msagent.train")
FEED_EVERY_S = 1.0
POLICY_FILE = "psro_policy.json"
"""The meta-strategy mixture, exported at the end of a run (see ``msagent export``)."""


def is_psro(cfg: TrainConfig) -> bool:
    """Whether the config asks for PSRO."""
    return cfg.league is not None and cfg.league.psro is not None


def load_game(cfg: TrainConfig) -> tuple[Any, str]:
    """The OpenSpiel game the env script makes, and the string that loads it again."""
    import pyspiel

    game = env_factory(cfg.scripts.env, cfg.env)()
    if not isinstance(game, pyspiel.Game):
        raise ConfigError(f"[league.psro] oracle = 'exact' needs an OpenSpiel game, but "
                          f"{cfg.scripts.env}'s make_env() returned {type(game).__name__}")
    return game, str(game)


def check_psro_game(cfg: TrainConfig) -> None:
    """Refuse, before a run directory is made, the 'nash' meta-solver on a game that does not
    have two sides (it would fail at the first iteration)."""
    if not is_psro(cfg) or cfg.league.psro.solver != "nash":
        return
    if cfg.league.psro.oracle == "exact":
        sides = load_game(cfg)[0].num_players()
    else:
        game = game_factory(cfg.scripts.env, cfg.env)()
        try:
            sides = num_sides(game)
        finally:
            game.close()
    if sides != 2:
        raise ConfigError(f"[league.psro] solver = 'nash' needs a two-player game, but "
                          f"{cfg.scripts.env} makes one of {sides}; use 'prd' or 'alpharank'")


def solver_of(cfg: TrainConfig) -> MetaSolver:
    """The configured meta-solver: by name with its parameters, or the user's function."""
    try:
        return cfg.league.psro.coordinator_settings().make_solver()
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"[league.psro] solver_params: {exc}") from exc


class PSRORun:
    """One PSRO run: the loop, its stop criteria, progress, TensorBoard and checkpoints."""

    def __init__(self, cfg: TrainConfig, run_dir: RunDir | None, console: Console) -> None:
        self.cfg, self.spec, self.run_dir, self.out = cfg, cfg.league.psro, run_dir, console
        self.game, self.game_string = load_game(cfg)
        self.tree = build_tree(self.game)
        self.members = TabularMembers(self.tree)
        self.writer = ScalarWriter(run_dir.tensorboard_dir if run_dir is not None else None,
                                   cfg.logging.tensorboard)
        self.feed = RunFeed(run_dir.path) if run_dir is not None else None
        self._next_feed = 0.0

    def run(self, resume: bool) -> dict[str, Any]:
        """Iterate until a stop criterion, a signal or a STOP file; checkpoint and export at
        the end."""
        stop_file = StopFile(self.run_dir.stop_path if self.run_dir is not None else None)
        state, elapsed = self._restore() if resume else (None, 0.0)
        psro = PSRO(ExactOracle(self.members), ExactEvaluator(self.members), solver_of(self.cfg),
                    mixture_nash_conv(self.members), elapsed)
        if state is None:
            state = psro.start(self.tree.num_players, self.spec.symmetric)
            self._report(state.history[-1])
        with StopSignals() as signals:
            reason = self._stop_reason(state, signals.received, stop_file)
            while reason is None:
                self._report(psro.step(state))
                if state.iteration % self.spec.checkpoint_every == 0:
                    self._checkpoint(state)
                self._publish(state)
                reason = self._stop_reason(state, signals.received, stop_file)
        return self._finish(state, reason)

    def _stop_reason(self, state: PSROState, signal: str | None,
                     stop_file: StopFile) -> str | None:
        """Why to stop now, or None."""
        last, stop = state.history[-1], self.cfg.run.stop
        if signal:
            return signal
        if stop_file.requested():
            return STOP_FILE_REASON
        if state.iteration >= self.spec.iterations:
            return "iterations"
        if self.spec.nash_conv and last.nash_conv is not None and \
                last.nash_conv <= self.spec.nash_conv:
            return "nash_conv"
        if stop.time_s and last.wall_s >= stop.time_s:
            return "time_s"
        return None

    def _report(self, record: IterationRecord) -> None:
        """One progress line and the TensorBoard scalars of an iteration."""
        entropy = [_entropy(np.array(m)) for m in record.meta]
        self.out.print(f"psro iteration {record.iteration:4d}  population "
                       f"{'/'.join(map(str, record.sizes))}  NashConv {record.nash_conv:.4f}  "
                       f"meta entropy {'/'.join(f'{e:.2f}' for e in entropy)}  "
                       f"{record.wall_s:.1f} s", highlight=False)
        log.info("psro iteration %d: NashConv %s", record.iteration, record.nash_conv)
        for tag, value in (("psro/nash_conv", record.nash_conv),
                           ("psro/population", float(sum(record.sizes))),
                           ("psro/meta_entropy", float(np.mean(entropy)))):
            if value is not None:
                self.writer.add(tag, value, record.iteration)

    def _publish(self, state: PSROState, final: bool = False) -> None:
        """The dashboard feed: the PSRO state, at most once a second (and at the end)."""
        if self.feed is None or (not final and time.monotonic() < self._next_feed):
            return
        self._next_feed = time.monotonic() + FEED_EVERY_S
        self.feed.write_state({"kind": "psro", "game": self.game_string, "psro": state.to_json(),
                               "progress": {"elapsed_s": state.history[-1].wall_s,
                                            "iterations": state.iteration}})

    def _checkpoint(self, state: PSROState) -> Path | None:
        """Save the members' policies (safetensors) and the PSRO state (JSON)."""
        if self.run_dir is None:
            return None
        return self.run_dir.save_checkpoint(state.iteration, member_tensors(self.members), {
            "psro": state.to_json(), "game": self.game_string})

    def _restore(self) -> tuple[PSROState, float]:
        """The state and members of the newest PSRO checkpoint, checked against the game."""
        found = load_psro_checkpoint(self.run_dir)
        if found.state["game"] != self.game_string:
            raise ConfigError(f"the checkpoint is of {found.state['game']}, but the env script "
                              f"now makes {self.game_string}")
        restore_members(self.members, found.tensors)
        state = PSROState.from_json(found.state["psro"])
        if state.symmetric != self.spec.symmetric:
            raise ConfigError(f"the checkpoint's PSRO has symmetric = {str(state.symmetric).lower()}"
                              f", the config says {str(self.spec.symmetric).lower()}; resume "
                              "with the setting it was started with")
        self.out.print(f"resumed PSRO at iteration {state.iteration} from checkpoint "
                       f"{found.step}", highlight=False)
        return state, state.history[-1].wall_s

    def _finish(self, state: PSROState, reason: str) -> dict[str, Any]:
        """Final checkpoint, the exported mixture, and the result figures."""
        checkpoint = self._checkpoint(state)
        self._publish(state, final=True)
        self.writer.close()
        last = state.history[-1]
        result = {"stop_reason": reason, "iterations": state.iteration,
                  "nash_conv": last.nash_conv, "population": last.sizes,
                  "wall_s": round(last.wall_s, 2), "game": self.game_string}
        if self.run_dir is not None:
            path = write_policy(self.run_dir.path / POLICY_FILE, self.game_string, self.tree,
                                self.members.mixture_profile(state))
            result.update(checkpoint=str(checkpoint), policy_file=str(path))
        if reason in ("SIGINT", "SIGTERM"):
            result["signal"] = reason
        return result


def run_psro(cfg: TrainConfig, run_dir: RunDir | None = None, resume: bool = False,
             console: Console | None = None) -> dict[str, Any]:
    """Run PSRO with the exact oracle as ``[league.psro]`` says; return the final figures."""
    with log_to_file(run_dir.log_path) if run_dir else nullcontext():
        return PSRORun(cfg, run_dir, console or Console(soft_wrap=True)).run(resume)


def _entropy(p: np.ndarray) -> float:
    """Shannon entropy (nats) of a distribution."""
    p = p[p > 0]
    return max(0.0, float(-(p * np.log(p)).sum())) if p.size else math.nan  # never "-0.00"
