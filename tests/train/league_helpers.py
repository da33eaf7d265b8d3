"""What the league training tests share: the tic-tac-toe league example, loaded quietly."""

from __future__ import annotations

import json
from pathlib import Path

from msagent.config import TrainConfig, load_config

LEAGUE_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tictactoe_league.toml"


def league_config(root: Path, mode: str, *overrides: str) -> TrainConfig:
    """``examples/tictactoe_league.toml`` in ``mode``, writing run dirs under ``root``, small
    (one env worker of 12 games) and quiet; ``overrides`` are ``--set`` strings."""
    return load_config(LEAGUE_EXAMPLE, [
        f"run.root={json.dumps(str(root))}", f"run.mode={json.dumps(mode)}",
        "logging.progress=false", "logging.tensorboard=false",
        "services.env_worker.num=1", "services.env_worker.num_envs=12", *overrides])


EQUAL_SHARES = ('league.players=[{id = "main", role = "main"}, '
                '{id = "main_exploiter", role = "main_exploiter"}, '
                '{id = "league_exploiter", role = "league_exploiter"}]')
"""The example's three players with equal env shares (its main is home in 10 of 12 slots, and
every player updates on main's batch size): for tests whose subject is not main's learning
and that wait for every player's updates."""
