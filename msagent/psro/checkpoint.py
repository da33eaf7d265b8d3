"""PSRO checkpoints: members' tabular policies as safetensors, the state as JSON; the exact
oracle's mixture exported from the newest one (``exporting.tabular_export.export_mixture``
also exports an RL oracle's, which needs the run's config)."""

from __future__ import annotations

from pathlib import Path

from msagent.errors import ConfigError
from msagent.psro import exact
from msagent.psro.exact_oracle import TabularMembers
from msagent.psro.game_tree import build_tree
from msagent.psro.state import PSROState
from msagent.psro.tabular_io import write_policy
from msagent.rundir import Checkpoint, RunDir

REQUIRED_KEYS = ("psro", "game")
"""JSON keys of a usable PSRO checkpoint."""


def member_tensors(members: TabularMembers) -> dict:
    """``"<member>/<seat>"`` -> tabular policy, for safetensors."""
    return {f"{m}/{s}": p for m, seats in members.policies.items() for s, p in seats.items()}


def restore_members(members: TabularMembers, tensors: dict) -> None:
    """Put back the policies :func:`member_tensors` wrote, checked against the tree."""
    for key, policy in tensors.items():
        member, _, seat = key.rpartition("/")
        policies = members.policies.setdefault(member, {})
        policies[int(seat)] = exact.check_policy(members.tree, int(seat), policy)


def load_psro_checkpoint(run_dir: RunDir) -> Checkpoint:
    """The newest readable checkpoint holding a PSRO state, or a ConfigError saying why not."""
    found = run_dir.checkpoints.latest(required_keys=REQUIRED_KEYS)
    if found is None:
        why = "; ".join(map(str, run_dir.checkpoints.skipped)) or "no checkpoint"
        raise ConfigError(f"{run_dir.path} has no PSRO checkpoint ({why})")
    return found


def export_exact_mixture(run_dir: RunDir, out: Path) -> tuple[Path, float, int]:
    """Write the exact oracle's newest meta-strategy mixture as a tabular policy file.

    Returns:
        The file, the mixture's NashConv, and the PSRO iteration it is from.
    """
    found = load_psro_checkpoint(run_dir)
    tree = build_tree(found.state["game"])
    members = TabularMembers(tree)
    restore_members(members, found.tensors)
    state = PSROState.from_json(found.state["psro"])
    profile = members.mixture_profile(state)
    path = write_policy(out, found.state["game"], tree, profile)
    return path, exact.nash_conv(tree, profile), state.iteration


def newest_checkpoint(run_dir: RunDir) -> Checkpoint | None:
    """The newest checkpoint that reads back, whatever its kind (None: none does)."""
    for step in reversed(run_dir.checkpoints.steps()):
        try:
            return run_dir.checkpoints.load(step)
        except Exception:  # unreadable: skipped, as CheckpointStore.latest does
            continue
    return None
