"""``msagent export RUN_DIR --format openspiel --policy P OUT`` for a run that is not PSRO: one
trained policy on an OpenSpiel game (a simultaneous one in its turn-based form) as a tabular
policy file, with its exact
NashConv, so that a league's (or a single policy's) exploitability can be checked with
OpenSpiel's own ``exploitability.nash_conv``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from msagent.errors import ConfigError, UserError
from msagent.psro import exact

if TYPE_CHECKING:
    from msagent.rundir import RunDir


@dataclass(frozen=True)
class TableExport:
    """A policy written as a table: where, its NashConv, and the checkpoint it came from."""

    path: Path
    nash_conv: float
    step: int
    infostates: int


def is_psro_run(run_dir: str | Path) -> bool:
    """Whether the run's config has a ``[league.psro]`` table (UserError: not a run)."""
    from msagent.evaluate import _open

    cfg = _open(run_dir)[1]
    return cfg.league is not None and cfg.league.psro is not None


def export_policy_table(run_dir: str | Path, policy_id: str, out: Path,
                        greedy: bool = False) -> TableExport:
    """Write the newest checkpoint's ``policy_id`` as a table over every information state of
    the run's game, the same policy in every seat (``greedy``: its most likely actions).

    Raises:
        UserError: not a run directory, no checkpoint or no such policy, or a game that has no
            exact tables (not a sequential OpenSpiel game, or too large), naming why.
    """
    from msagent.exporting.run_export import load_run_policy
    from msagent.psro.game_tree import sequential_form
    from msagent.psro.probe import probe_for_scripts
    from msagent.psro.tabular_io import write_policy
    from msagent.vocabulary import LEAGUE_MIXTURE

    if policy_id == LEAGUE_MIXTURE:
        return export_league_mixture(run_dir, out)
    policy, source, cfg = load_run_policy(run_dir, policy_id)
    cannot = f"cannot write {policy_id} of {run_dir} as a tabular policy"
    probe = probe_for_scripts(str(cfg.scripts.env), dict(cfg.env))
    if isinstance(probe, str):
        raise UserError(f"{cannot}: {probe}")
    try:
        profile = probe.tables(policy, greedy)
    except ValueError as exc:  # a recurrent or continuous policy
        raise UserError(f"{cannot}: {exc}") from None
    path = write_policy(out, str(sequential_form(probe.game)), probe.tree, profile)
    return TableExport(path, probe.nash_conv(profile), source["checkpoint_step"],
                       probe.infostates)


def export_league_mixture(run_dir: str | Path, out: Path) -> TableExport:
    """Write the league's mixture of the newest checkpoint (``[league.mixture]``): each seat
    plays its snapshots (``RUN_DIR/snapshots``) by the mixture's weights, as one table.

    Raises:
        UserError: no checkpoint holds a mixture (not a league on a small two-seat OpenSpiel
            game, or none solved yet), or a snapshot file is missing.
    """
    import numpy as np

    from msagent.config import load_config
    from msagent.exporting.snapshot_tables import snapshot_tables
    from msagent.psro.checkpoint import newest_checkpoint
    from msagent.psro.game_tree import sequential_form
    from msagent.psro.league_mixture import members_and_weights
    from msagent.psro.tabular_io import write_policy
    from msagent.rundir import RunDir
    from msagent.vocabulary import PolicyRef

    run = RunDir.open(run_dir)
    found = newest_checkpoint(run)
    mixture = ((found.state if found else {}).get("league") or {}).get("mixture")
    if not mixture:
        raise UserError(f"{run_dir} has no league mixture in its newest checkpoint: a league on "
                        "a small two-seat OpenSpiel game records one every [league.mixture] "
                        "every_s once it has snapshots")
    tables = snapshot_tables(load_config(run.config_path),
                             lambda m: run.snapshots.load(PolicyRef.parse(m).key))
    if isinstance(tables, str):
        raise UserError(f"cannot write the league's mixture of {run_dir}: {tables}")
    members, weights = members_and_weights(mixture)
    metas = [np.array(w) for w in weights]
    try:
        profile = tables.mixture([members, members], metas)
    except FileNotFoundError as exc:
        raise UserError(f"a snapshot of the league's mixture is missing: {exc}") from None
    path = write_policy(out, str(sequential_form(tables.game)), tables.tree, profile)
    return TableExport(path, exact.nash_conv(tables.tree, profile), found.step,
                       sum(len(names) for names in tables.tree.infostates))


def export_mixture(run_dir: RunDir, out: Path) -> tuple[Path, float, int]:
    """Write a PSRO run's newest meta-strategy mixture as a tabular policy file (an RL
    oracle's from its league checkpoint, else the exact oracle's).

    Returns:
        The file, the mixture's NashConv, and the PSRO iteration it is from.
    """
    from msagent.psro.checkpoint import export_exact_mixture, newest_checkpoint

    found = newest_checkpoint(run_dir)
    if found is not None and "psro" in found.state.get("league", {}):
        return export_network_mixture(run_dir, found.state["league"]["psro"], out)
    return export_exact_mixture(run_dir, out)


def export_network_mixture(run_dir: RunDir, data: dict, out: Path) -> tuple[Path, float, int]:
    """The RL oracle's mixture: the members' networks (``RUN_DIR/snapshots``) as tables."""
    from msagent.config import load_config
    from msagent.psro.game_tree import sequential_form
    from msagent.psro.neural import tables_from_scripts
    from msagent.psro.state import PSROState
    from msagent.psro.tabular_io import write_policy
    from msagent.vocabulary import PolicyRef

    cfg = load_config(run_dir.config_path)
    tables = tables_from_scripts(cfg.scripts.env, cfg.scripts.agent, cfg.env, cfg.run.seed,
                                 lambda m: run_dir.snapshots.load(PolicyRef.parse(m).key),
                                 cfg.league.psro.member_play == "greedy")
    if isinstance(tables, str):
        raise ConfigError(f"cannot export {run_dir.path} as a tabular policy: {tables}")
    state = PSROState.from_json(data["state"])
    profile = tables.mixture(*state.seat_mixture())
    path = write_policy(out, str(sequential_form(tables.game)), tables.tree, profile)
    return path, exact.nash_conv(tables.tree, profile), state.iteration
