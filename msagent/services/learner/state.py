"""What a learner checkpoints: its counters and version, the policy weights, the algorithm's
state (optimizer, RNG), and the driver's progress (env steps, episodes, stop criteria)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from msagent.policy import PPO
from msagent.rundir import RunDir, flatten_state, unflatten_state
from msagent.rundir.learner_layout import (  # the layout's readers; train/ imports them here
    LEAGUE_REQUIRED_KEYS as LEAGUE_REQUIRED_KEYS,
    REQUIRED_KEYS as REQUIRED_KEYS,
    checkpoint_policy as checkpoint_policy,
    player_part,
    policy_weights as policy_weights,
)

log = logging.getLogger("msagent.learner")


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
