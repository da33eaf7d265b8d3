"""What a learner checkpoints: its counters and version, the policy weights, the algorithm's
state (optimizer, RNG), and the driver's progress (env steps, episodes, stop criteria)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from msagent.policy import PPO
from msagent.rundir import Checkpoint, RunDir, flatten_state, unflatten_state

log = logging.getLogger("msagent.learner")

REQUIRED_KEYS = ("skeleton", "counters")
LEAGUE_REQUIRED_KEYS = ("learners", "league")
"""Keys a learner checkpoint's JSON must have; one without them is skipped as unreadable."""


@dataclass
class LearnerCounters:
    """What the learner has done; checkpointed with the weights."""

    updates: int = 0
    consumed_steps: int = 0
    dropped_fragments: int = 0
    snapshots: int = 0
    version: int = 0
    losses: dict[str, float] = field(default_factory=dict)


@dataclass
class Restored:
    """What a learner checkpoint gives back besides the weights it loaded."""

    step: int
    counters: LearnerCounters
    progress: dict[str, Any]
    run: dict[str, Any]


def save_learner(run_dir: RunDir, ppo: PPO, counters: LearnerCounters,
                 progress: dict[str, Any], run: dict[str, Any]) -> int:
    """Write weights, optimizer state, counters and progress as one atomic checkpoint."""
    tensors, skeleton = flatten_state({"policy": ppo.policy.get_weights(),
                                       "ppo": ppo.state_dict()})
    plain = {k: v for k, v in vars(counters).items() if k != "losses"}
    run_dir.save_checkpoint(counters.updates, tensors, {
        "skeleton": skeleton, "counters": plain, "progress": progress, "run": run})
    return counters.updates


def export_learner(ppo: PPO, counters: LearnerCounters) -> dict[str, Any]:
    """A learner's weights, optimizer state and counters as ``{"tensors", "state"}`` (one
    player's part of a league checkpoint)."""
    tensors, skeleton = flatten_state({"policy": ppo.policy.get_weights(),
                                       "ppo": ppo.state_dict()})
    plain = {k: v for k, v in vars(counters).items() if k != "losses"}
    return {"tensors": tensors, "state": {"skeleton": skeleton, "counters": plain}}


def player_part(tensors: dict[str, Any], state: dict[str, Any],
                player: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """One player's tensors and state inside a checkpoint (the whole of a one-learner one)."""
    if player is None:
        return tensors, state
    prefix = f"{player}/"
    mine = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
    return mine, state["learners"][player]


def restore_learner(run_dir: RunDir, ppo: PPO, step: int, player: str | None = None) -> Restored:
    """Load checkpoint ``step`` (chosen and checked by the driver) into ``ppo``; in a league
    checkpoint, ``player``'s part."""
    found = run_dir.load_checkpoint(step)
    tensors, part = player_part(found.tensors, found.state, player)
    state = unflatten_state(tensors, part["skeleton"])
    ppo.policy.set_weights(state["policy"])
    ppo.load_state_dict(state["ppo"])
    ppo.policy.invalidate_cache()
    log.info("learner resumed from checkpoint step %d", found.step)
    counters = LearnerCounters(**part["counters"])
    return Restored(found.step, counters, found.state.get("progress", {}),
                    found.state.get("run", {}))


def policy_weights(tensors: dict[str, Any], state: dict[str, Any],
                   player: str | None = None) -> dict[str, Any]:
    """The policy weights inside a learner checkpoint (to check them before a resume)."""
    tensors, part = player_part(tensors, state, player)
    return unflatten_state(tensors, part["skeleton"])["policy"]


def checkpoint_policy(found: Checkpoint, player: str) -> dict[str, Any]:
    """``player``'s policy weights in a league checkpoint; the one policy of a one-policy one."""
    league = "learners" in found.state
    return policy_weights(found.tensors, found.state, player if league else None)


def save_league_checkpoint(run_dir: RunDir, step: int, parts: dict[str, dict[str, Any]],
                           league: dict[str, Any], progress: dict[str, Any],
                           run: dict[str, Any]) -> int:
    """Write every player's part and the league's state as one atomic checkpoint."""
    tensors = {f"{player}/{name}": value for player, part in parts.items()
               for name, value in part["tensors"].items()}
    learners = {player: part["state"] for player, part in parts.items()}
    run_dir.save_checkpoint(step, tensors, {"learners": learners, "league": league,
                                            "progress": progress, "run": run})
    return step
