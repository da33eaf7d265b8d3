"""What ``msagent train`` checks and writes before training starts: every check that can fail
runs first, so a wrong config or resume leaves no run directory behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from msagent.config import TrainConfig
    from msagent.rundir import RunDir


def prepare(cfg: TrainConfig, resume: Path | None, result_json: Path | None,
            warn: Callable[[str], None]) -> tuple[Any, RunDir]:
    """Every check that can fail before training, then the run directory with the config.

    Nothing is written (no run directory made, no config replaced) unless every check passed.
    """
    from msagent.preflight import check_address, check_output
    from msagent.train.psro_run import check_psro_game
    from msagent.train.supported import check_supported

    check_supported(cfg)
    check_psro_game(cfg)
    check_output(result_json)
    if cfg.run.mode == "ray" and cfg.run.address:
        check_address(cfg.run.address)
    plan, run_dir = None, None
    if resume is None:
        from msagent.train.initial_weights import initial_weights

        initial_weights(cfg)  # a bad [[league.players]] init fails before a run dir is made
    if resume is not None:
        from msagent.rundir import RunDir
        from msagent.train.resume import plan_resume

        run_dir = RunDir.open(resume)
        if cfg.league is not None and cfg.league.psro is not None and \
                cfg.league.psro.oracle == "exact":
            from msagent.psro.checkpoint import load_psro_checkpoint

            return load_psro_checkpoint(run_dir), open_run_dir(cfg, run_dir)
        plan = plan_resume(cfg, run_dir, warn)
    return plan, open_run_dir(cfg, run_dir)


def open_run_dir(cfg: TrainConfig, run_dir: RunDir | None) -> RunDir:
    """A fresh run directory (or the one to resume) holding the resolved config."""
    from msagent.config import dump_config
    from msagent.rundir import RunDir

    if run_dir is None:
        run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_dir.write_config(dump_config(cfg))
    return run_dir
