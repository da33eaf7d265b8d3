"""Learning algorithms: they live in the learner and train a Policy from Fragments."""

from msagent.policy.algorithms.base import Algorithm, stack_fragments
from msagent.policy.algorithms.ppo import (
    CARTPOLE_FRAGMENT_LEN,
    CARTPOLE_NUM_ENVS,
    CARTPOLE_PPO,
    PPO,
    PPOConfig,
)

__all__ = [
    "CARTPOLE_FRAGMENT_LEN",
    "CARTPOLE_NUM_ENVS",
    "CARTPOLE_PPO",
    "PPO",
    "Algorithm",
    "PPOConfig",
    "stack_fragments",
]
