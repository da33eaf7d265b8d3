"""The learner: samples the replay buffer, updates the policy, publishes its weights and pushes
snapshots to the model pool (asking the league when)."""

from __future__ import annotations

from msagent.services.learner.learner import Learner, LearnerSettings
from msagent.services.learner.publish import PublishSettings
from msagent.services.learner.state import (LEAGUE_REQUIRED_KEYS, REQUIRED_KEYS, checkpoint_policy,
                                           policy_weights, save_league_checkpoint)

__all__ = ["LEAGUE_REQUIRED_KEYS", "Learner", "LearnerSettings", "PublishSettings",
           "REQUIRED_KEYS", "checkpoint_policy", "policy_weights", "save_league_checkpoint"]
