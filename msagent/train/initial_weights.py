"""A league player's starting weights: a policy trained elsewhere (a single-player pretraining
run, a player or snapshot of another league) instead of a freshly initialised network.

``[[league.players]] init = PATH`` names a run directory (its newest readable checkpoint), a
checkpoint file (``checkpoints/ckpt-*.safetensors``) or a snapshot file
(``snapshots/<player>@<version>.safetensors``). In a league checkpoint the part of
``init_player`` is taken (default: the player's own id). Everything is loaded and checked
against the policy the scripts build in the driver, before any service starts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file

from msagent.config import TrainConfig
from msagent.errors import ConfigError
from msagent.rundir import Checkpoint, RunDir
from msagent.rundir.checkpoints import CheckpointStore
from msagent.services.learner import checkpoint_policy
from msagent.user_scripts import build_policy

Weights = dict[str, np.ndarray]
_CHECKPOINT = re.compile(r"^ckpt-(\d{9,})\.safetensors$")


def initial_weights(cfg: TrainConfig) -> dict[str, Weights]:
    """Each league player's starting weights where its entry sets ``init`` (checked to fit)."""
    if cfg.league is None:
        return {}
    found: dict[str, Weights] = {}
    for entry in cfg.league.players:
        if entry.init is None:
            continue
        now = fresh_weights(cfg, entry.ids()[0])  # this entry's network
        for pid in entry.ids():
            weights = load_weights(entry.init, entry.init_player or pid)
            problem = mismatch(weights, now)
            if problem:
                raise ConfigError(f"league.players {pid!r}: init {entry.init}: {problem}")
            found[pid] = weights
    return found


def fresh_weights(cfg: TrainConfig, player: str = "main") -> Weights:
    """The weights of ``player``'s policy as the run's scripts build it now (to check saved
    ones against)."""
    return build_policy(str(cfg.scripts.env), str(cfg.agent_of(player)), dict(cfg.env),
                        cfg.run.seed).get_weights()


def build_each_network(cfg: TrainConfig) -> None:
    """Build each agent script's network once (a league's players may have their own), so a
    broken script fails before any service starts."""
    players = cfg.league.player_ids() if cfg.league is not None else ["main"]
    for player in {cfg.agent_of(p): p for p in players}.values():
        fresh_weights(cfg, player)


def load_weights(path: str | Path, player: str) -> Weights:
    """The policy weights at ``path`` (a run directory, a checkpoint or a snapshot file).

    Raises:
        ConfigError: nothing readable there, or a league checkpoint without ``player``.
    """
    where = Path(path).expanduser()
    if not where.exists():
        raise ConfigError(f"init {where}: it does not exist")
    if where.is_dir():
        return _from_checkpoint(_newest(where), where, player)
    match = _CHECKPOINT.fullmatch(where.name)
    if where.is_file() and match:
        return _from_checkpoint(_read(where, match), where, player)
    if where.is_file() and where.suffix == ".safetensors":
        try:
            return load_file(str(where))
        except (OSError, SafetensorError) as exc:
            raise ConfigError(f"init {where}: unreadable weights: {exc}") from exc
    raise ConfigError(f"init {where}: not a run directory, a checkpoint or a snapshot file "
                      "(.safetensors)")


def mismatch(saved: dict[str, Any], now: dict[str, Any]) -> str | None:
    """What keeps ``saved`` from loading into a policy whose weights are ``now`` (None: fits)."""
    for name in sorted(set(saved) | set(now)):
        if name not in now or name not in saved:
            where = "the saved weights only" if name in saved else "the policy built now only"
            return (f"parameter {name!r} is in {where}; the network in the agent script "
                    "differs from the one saved")
        if np.shape(saved[name]) != np.shape(now[name]):
            return (f"parameter {name!r} has shape {tuple(np.shape(saved[name]))} in the saved "
                    f"weights but {tuple(np.shape(now[name]))} in the policy built now")
    return None


def _newest(folder: Path) -> Checkpoint:
    """A run directory's newest readable checkpoint of either kind."""
    found, skipped = RunDir.open(folder).checkpoints.latest_with_report(())
    if found is None:
        reasons = "; ".join(str(s) for s in skipped) or "it has none"
        raise ConfigError(f"init {folder}: no readable checkpoint ({reasons})")
    return found


def _read(path: Path, match: re.Match[str]) -> Checkpoint:
    """The checkpoint ``path`` names (its JSON beside it)."""
    try:
        return CheckpointStore(path.parent).load(int(match.group(1)))
    except (OSError, ValueError, SafetensorError) as exc:
        raise ConfigError(f"init {path}: unreadable checkpoint: {exc}") from exc


def _from_checkpoint(found: Checkpoint, where: Path, player: str) -> Weights:
    """The policy weights in a checkpoint: ``player``'s part of a league one."""
    learners = found.state.get("learners")
    if learners is not None and player not in learners:
        raise ConfigError(f"init {where}: this league checkpoint has no player {player!r} "
                          f"(it has {sorted(learners)}): set init_player")
    try:
        return checkpoint_policy(found, player)
    except (KeyError, TypeError) as exc:
        raise ConfigError(f"init {where}: not a learner checkpoint ({exc!r})") from exc

