"""``msagent export RUN_DIR --format onnx OUT``: a run's policy from its newest checkpoint as
an ONNX file and its manifest, checked against PyTorch on random and real observations, and
optionally published to a model store."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from msagent.envs.bots import random_action
from msagent.errors import UserError
from msagent.policy.policy import Policy
from msagent.exporting.model_store import Manifest, ModelStore, check_game
from msagent.exporting.onnx_export import ObsDtype, checked_export, manifest_info, obs_dtype_of
from msagent.rundir.atomic import atomic_write

if TYPE_CHECKING:
    from msagent.config import TrainConfig

SAMPLE_TURNS = 128
"""Turns of random legal play whose observations (and masks) the export is checked on."""


@dataclass(frozen=True)
class GameSample:
    """What playing a game shows about the graph it needs, and inputs to check it on.

    Attributes:
        obs_dtype: The observations' dtype (``uint8`` images, else ``float32``).
        masked: The game gives legal-action masks.
        feeds: Real ``obs`` (and ``action_mask``) batches from random legal play.
    """

    obs_dtype: ObsDtype
    masked: bool
    feeds: dict[str, np.ndarray]


@dataclass(frozen=True)
class RunExport:
    """A run's policy exported: the graph, its manifest fields, and where it came from."""

    onnx_bytes: bytes
    info: dict[str, Any]
    parity: float
    step: int


def sample_game(env_script: str, env_params: dict[str, Any], turns: int = SAMPLE_TURNS,
                seed: int = 0) -> GameSample:
    """Play random legal moves in the user's game to learn its observation dtype and whether
    it masks actions, keeping the observations and masks seen."""
    from msagent.user_scripts import game_factory

    game = game_factory(env_script, env_params)()
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    try:
        turn = game.reset(seed=seed)
        while len(obs) < turns:
            if turn.done:
                turn = game.reset(seed=int(rng.integers(2**31)))
            actions = {}
            for seat in turn.to_act:
                mask = None if turn.masks is None else turn.masks.get(seat)
                obs.append(np.asarray(turn.obs[seat]))
                masks.append(mask)
                actions[seat] = random_action(game.action_space, mask, rng)
            turn = game.step(actions)
    finally:
        game.close()
    return GameSample(obs_dtype_of(game.observation_space), any(m is not None for m in masks),
                      _feeds(obs, masks))


def _feeds(obs: list[np.ndarray], masks: list[np.ndarray | None]) -> dict[str, np.ndarray]:
    """Observations as a batch, and masks as one when any turn had one (all-legal elsewhere)."""
    feeds = {"obs": np.stack(obs)}
    known = [m for m in masks if m is not None]
    if known:
        full = np.ones(len(known[0]), bool)
        feeds["action_mask"] = np.stack([full if m is None else m for m in masks])
    return feeds


def load_run_policy(run_dir: str | Path,
                    policy_id: str) -> tuple[Policy, dict[str, Any], TrainConfig]:
    """The policy ``policy_id`` of the run's newest readable checkpoint, built by the run's
    scripts; where it came from (``source`` of the manifest); the run's config.

    Raises:
        UserError: not a run directory, no readable checkpoint, or no such policy.
    """
    from msagent.evaluate import _checkpoint, _open, _players, _weights
    from msagent.user_scripts import build_policy

    path, cfg = _open(run_dir)
    found = _checkpoint(path, cfg)
    players = _players(found)
    if policy_id not in players:
        raise UserError(f"unknown policy {policy_id!r}: the newest checkpoint of {path} has "
                        f"the policies {', '.join(players)}")
    policy = build_policy(str(cfg.scripts.env), str(cfg.agent_of(policy_id)), dict(cfg.env),
                          cfg.run.seed)
    policy.set_weights(_weights(found, policy_id))
    policy.invalidate_cache()
    source = {"run_dir": str(path), "policy": policy_id, "checkpoint_step": found.step,
              "param_version": _param_version(found.state, policy_id)}
    return policy, source, cfg


def _param_version(state: dict[str, Any], policy_id: str) -> int | None:
    """The learner's parameter version of ``policy_id`` in a checkpoint's JSON state."""
    part = state["learners"][policy_id] if "learners" in state else state
    return part.get("counters", {}).get("version")


def export_run(run_dir: str | Path, policy_id: str = "main", atol: float = 1e-5) -> RunExport:
    """Export a run's policy, checked on random inputs and on real observations of its game.

    Raises:
        UserError: see :func:`load_run_policy`.
        ParityError: the graph differs from PyTorch by more than ``atol``.
    """
    policy, source, cfg = load_run_policy(run_dir, policy_id)
    sample = sample_game(str(cfg.scripts.env), dict(cfg.env), seed=cfg.run.seed)
    onnx_bytes, parity = checked_export(policy, sample.masked, sample.obs_dtype, atol,
                                        sample.feeds)
    return RunExport(onnx_bytes, manifest_info(policy, onnx_bytes, source), parity,
                     source["checkpoint_step"])


def write_export(export: RunExport, out: Path, store: str | None = None,
                 game: str | None = None) -> dict[str, Any]:
    """Write ``OUT`` and ``OUT.manifest.json``; with a store, publish there too (then the
    file's manifest is the store's). Returns the manifest written.

    Unpublished, the manifest has every field but ``version`` (and ``game`` is ``--game`` or
    None).
    """
    if store is not None and game is None:
        raise UserError("--publish needs --game NAME (the game's name in the model store)")
    if game is not None:
        check_game(game)
    if store is not None:
        manifest = ModelStore(store).publish(game, export.onnx_bytes, export.info).model_dump()
    else:
        manifest = _file_manifest(export, game)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, export.onnx_bytes)
    atomic_write(manifest_path(out), json.dumps(manifest, indent=1).encode("utf-8"))
    return manifest


def manifest_path(out: Path) -> Path:
    """Where the manifest of an exported file goes: ``OUT.manifest.json``."""
    return out.with_name(out.name + ".manifest.json")


def _file_manifest(export: RunExport, game: str | None) -> dict[str, Any]:
    """The manifest of an unpublished file: a store's fields but the version."""
    data = export.onnx_bytes
    full = Manifest(game=game or "unpublished", version=1, sha256=hashlib.sha256(data).hexdigest(),
                    size=len(data), created_at=time.time(), **export.info).model_dump()
    del full["version"]
    full["game"] = game
    return full

