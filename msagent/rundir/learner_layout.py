"""Where a learner's part lies in a checkpoint: the keys that mark a one-learner or a league
checkpoint, and a player's policy weights inside one. Readers of a run (evaluate, resume,
initial weights) use it; ``services.learner.state`` writes that layout."""

from __future__ import annotations

from typing import Any

from msagent.rundir.checkpoints import Checkpoint
from msagent.rundir.state_codec import unflatten_state

REQUIRED_KEYS = ("skeleton", "counters")
LEAGUE_REQUIRED_KEYS = ("learners", "league")
"""Keys a learner checkpoint's JSON must have; one without them is skipped as unreadable."""


def player_part(tensors: dict[str, Any], state: dict[str, Any],
                player: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """One player's tensors and state inside a checkpoint (the whole of a one-learner one)."""
    if player is None:
        return tensors, state
    prefix = f"{player}/"
    mine = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
    return mine, state["learners"][player]


def policy_weights(tensors: dict[str, Any], state: dict[str, Any],
                   player: str | None = None) -> dict[str, Any]:
    """The policy weights inside a learner checkpoint (to check them before a resume)."""
    tensors, part = player_part(tensors, state, player)
    return unflatten_state(tensors, part["skeleton"])["policy"]


def checkpoint_policy(found: Checkpoint, player: str) -> dict[str, Any]:
    """``player``'s policy weights in a league checkpoint; the one policy of a one-policy one."""
    league = "learners" in found.state
    return policy_weights(found.tensors, found.state, player if league else None)
