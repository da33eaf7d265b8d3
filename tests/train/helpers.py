"""What the training tests share: the CartPole example config, loaded quietly into tmp dirs;
a run's feed; stopping a run once what a test checks has happened."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from msagent.config import TrainConfig, load_config
from msagent.rundir import RunDir

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_ppo.toml"


def example_config(root: Path, mode: str, *overrides: str) -> TrainConfig:
    """``examples/cartpole_ppo.toml`` in ``mode`` ("local" or "ray"), writing run dirs under
    ``root``, without progress output; ``overrides`` are ``--set`` strings."""
    return load_config(EXAMPLE, [f"run.root={json.dumps(str(root))}",
                                 f"run.mode={json.dumps(mode)}", "logging.progress=false",
                                 "logging.tensorboard=false", *overrides])


def feed_state(run_dir: RunDir) -> dict[str, Any]:
    """The run's dashboard feed (progress, placements, replacements), or {} before the first."""
    try:
        return json.loads((run_dir.path / "feed" / "state.json").read_text())
    except (OSError, ValueError):
        return {}


def replacement_back(run_dir: RunDir) -> bool:
    """Whether the feed shows a replacement that is back (took steps, or answered)."""
    return any(r["back_s"] is not None for r in feed_state(run_dir).get("replacements", []))


def stop_when(run_dir: RunDir, predicate: Callable[[], Any], timeout_s: float,
              what: str) -> None:
    """Wait for ``predicate``, then ask the run to stop cleanly (its STOP file), so a test
    trains exactly as long as what it checks needs rather than for a padded ``time_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.2)
    run_dir.stop_path.touch()
