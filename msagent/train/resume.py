"""``--resume``: choose the checkpoint to continue from and check it fits, before anything runs.

Everything here happens in the driver before a service starts or the run directory is written
to, so a resume that cannot work fails with nothing changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from msagent.config import TrainConfig
from msagent.errors import ConfigError
from msagent.rundir import Checkpoint, RunDir
from msagent.services.learner import LEAGUE_REQUIRED_KEYS, REQUIRED_KEYS, policy_weights
from msagent.train.initial_weights import fresh_weights, mismatch
from msagent.train.run_services import RunInfo

log = logging.getLogger("msagent.train")


@dataclass
class ResumePlan:
    """The checkpoint a resumed run continues from, and what the driver restores from it."""

    step: int
    path: str
    progress: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    league: dict[str, Any] | None = None
    """The league's state as checkpointed (league runs only)."""


def plan_resume(cfg: TrainConfig, run_dir: RunDir,
                warn: Callable[[str], None] = log.warning) -> ResumePlan:
    """The newest readable checkpoint of ``run_dir``, checked against the config's policy.

    Unreadable checkpoints are skipped with a warning; none readable is an error.

    Raises:
        ConfigError: Nothing to resume, or the checkpoint does not fit the policy the user's
            scripts build now (naming the checkpoint file and the parameter).
    """
    keys = REQUIRED_KEYS if cfg.league is None else LEAGUE_REQUIRED_KEYS
    found = _newest_readable(run_dir, warn, keys)
    path = str(run_dir.checkpoints.path(found.step, ".safetensors"))
    players = [None] if cfg.league is None else cfg.league.player_ids()
    for player in players:
        _check_fits(cfg, found, path, player)
    if cfg.league is not None and not cfg.services.model_pool.url:
        _check_snapshots(run_dir, found.state["league"], path)
    return ResumePlan(found.step, path, found.state.get("progress", {}), found.state.get("run", {}),
                      found.state.get("league"))


def _newest_readable(run_dir: RunDir, warn: Callable[[str], None],
                     keys: tuple[str, ...]) -> Checkpoint:
    """The newest checkpoint that reads back whole with a learner's keys; warn of the others."""
    steps = run_dir.checkpoint_steps()
    if not steps:
        raise ConfigError(f"cannot resume {run_dir.path}: it has no complete checkpoint "
                          f"in {run_dir.checkpoint_dir}")
    found, skipped = run_dir.checkpoints.latest_with_report(keys)
    for skip in skipped:
        warn(f"skipping unreadable checkpoint {skip}")
    if found is None:
        raise ConfigError(f"cannot resume {run_dir.path}: none of its {len(steps)} checkpoints "
                          "can be read (see the warnings above)")
    return found


def _check_snapshots(run_dir: RunDir, league: dict[str, Any], path: str) -> None:
    """Refuse a league checkpoint whose snapshots an in-memory pool cannot get back."""
    from msagent.train.league_plan import league_snapshot_keys

    missing = run_dir.snapshots.missing(league_snapshot_keys(league))
    if missing:
        raise ConfigError(f"cannot resume from {path}: the league names snapshot(s) "
                          f"{', '.join(map(str, missing[:5]))} but {run_dir.snapshots.folder} "
                          "lacks their files")


def _check_fits(cfg: TrainConfig, found: Checkpoint, path: str, player: str | None) -> None:
    """Refuse a checkpoint whose weights do not fit the policy the scripts build now."""
    if player is not None and player not in found.state["learners"]:
        raise ConfigError(f"cannot resume from {path}: it has no learner of player {player!r} "
                          f"(it has {sorted(found.state['learners'])})")
    saved = policy_weights(found.tensors, found.state, player)
    problem = mismatch(saved, fresh_weights(cfg, player or "main"))
    if problem:
        raise ConfigError(f"cannot resume from {path}: "
                          + (f"player {player!r}: " if player else "") + problem)


def resume_plan(cfg: TrainConfig, run_dir: RunDir | None,
                resume: bool | ResumePlan) -> ResumePlan | None:
    """The resume plan: given, found in the run directory, or None for a fresh run."""
    if isinstance(resume, ResumePlan) or not resume:
        return resume or None
    if run_dir is None:
        raise ValueError("resume=True needs the run directory to resume")
    return plan_resume(cfg, run_dir)


def run_info(run_dir: RunDir | None, plan: ResumePlan | None,
             league_start: dict[str, Any] | None = None) -> RunInfo:
    """Identity and resume point of this run (a resumed run keeps its id)."""
    run_id = run_dir.run_id if run_dir else f"run-{time.time_ns():x}"
    if plan is None:
        return RunInfo(str(run_dir.path) if run_dir else None, run_id,
                       league_state=league_start)
    generation = int(plan.run.get("generation", 0)) + 1
    return RunInfo(str(run_dir.path) if run_dir else None, plan.run.get("run_id", run_id),
                   plan.step, generation, plan.league)
