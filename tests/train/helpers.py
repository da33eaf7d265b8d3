"""What the training tests share: the CartPole example config, loaded quietly into tmp dirs."""

from __future__ import annotations

import json
from pathlib import Path

from msagent.config import TrainConfig, load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cartpole_ppo.toml"


def example_config(root: Path, mode: str, *overrides: str) -> TrainConfig:
    """``examples/cartpole_ppo.toml`` in ``mode`` ("local" or "ray"), writing run dirs under
    ``root``, without progress output; ``overrides`` are ``--set`` strings."""
    return load_config(EXAMPLE, [f"run.root={json.dumps(str(root))}",
                                 f"run.mode={json.dumps(mode)}", "logging.progress=false",
                                 "logging.tensorboard=false", *overrides])
