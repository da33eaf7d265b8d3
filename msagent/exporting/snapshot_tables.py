"""A league's snapshots as tables over a small OpenSpiel game's information states, each in
its owner's network: what the league's mixture is solved over (live, by the driver) and
written from (``msagent export RUN_DIR --format openspiel --policy league``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msagent.config import TrainConfig
from msagent.psro.neural import NetworkTables, exact_game_of
from msagent.vocabulary import PolicyRef


def snapshot_tables(cfg: TrainConfig, pull: Callable[[str], Any],
                    max_nodes: int | None = None) -> NetworkTables | str:
    """The snapshots as tables (``pull``: snapshot id -> its weights), each loaded into its
    owner's network (a player's own agent script); or why the game has none (``max_nodes``:
    a larger tree is refused)."""
    from msagent.user_scripts import build_policy

    found = exact_game_of(str(cfg.scripts.env), cfg.env)
    if isinstance(found, str):
        return found
    policies: dict[str, Any] = {}

    def policy_of(member: str) -> Any:
        agent = str(cfg.agent_of(PolicyRef.parse(member).name))
        if agent not in policies:
            policies[agent] = build_policy(str(cfg.scripts.env), agent, cfg.env, cfg.run.seed)
        return policies[agent]

    try:
        return NetworkTables(found[0], None, pull, found[1], policy_of=policy_of,
                             max_nodes=max_nodes)
    except ValueError as exc:  # too large, uneven information states
        return str(exc)
