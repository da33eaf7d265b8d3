"""What a learner checkpoints: its counters, the policy weights and the algorithm's state."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from msagent.policy import PPO
from msagent.rundir import RunDir, flatten_state, unflatten_state

log = logging.getLogger("msagent.learner")


@dataclass
class LearnerCounters:
    """What the learner has done; checkpointed with the weights."""

    updates: int = 0
    consumed_steps: int = 0
    dropped_fragments: int = 0
    snapshots: int = 0
    losses: dict[str, float] = field(default_factory=dict)


def save_learner(run_dir: RunDir, ppo: PPO, counters: LearnerCounters) -> None:
    """Write weights, optimizer state and counters as one atomic checkpoint."""
    tensors, skeleton = flatten_state({"policy": ppo.policy.get_weights(),
                                       "ppo": ppo.state_dict()})
    plain = {k: v for k, v in vars(counters).items() if k != "losses"}
    run_dir.save_checkpoint(counters.updates, tensors, {"skeleton": skeleton, "counters": plain})


def restore_learner(run_dir: RunDir, ppo: PPO) -> LearnerCounters | None:
    """Load the last complete checkpoint into ``ppo``; its counters, or None if there is none."""
    found = run_dir.latest_checkpoint()
    if found is None:
        log.warning("no complete checkpoint in %s; starting fresh", run_dir.path)
        return None
    state = unflatten_state(found.tensors, found.state["skeleton"])
    ppo.policy.set_weights(state["policy"])
    ppo.load_state_dict(state["ppo"])
    log.info("resumed from checkpoint step %d", found.step)
    return LearnerCounters(**found.state["counters"])
