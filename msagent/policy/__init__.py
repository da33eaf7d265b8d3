"""The policy pyramid: tensor operators -> networks -> Policy (acting) -> algorithms (learning).

Pure PyTorch and numpy; nothing here knows about Ray or services.
"""

from msagent.policy.algorithms import (
    CARTPOLE_FRAGMENT_LEN,
    CARTPOLE_NUM_ENVS,
    CARTPOLE_PPO,
    PPO,
    Algorithm,
    PPOConfig,
    stack_fragments,
)
from msagent.policy.networks import CNN, MLP, ActorCritic, LSTMCore, NetworkConfig
from msagent.policy.policy import ActionSpec, ActOutput, Policy
from msagent.policy.symmetry import Symmetry

__all__ = [
    "CARTPOLE_FRAGMENT_LEN",
    "CARTPOLE_NUM_ENVS",
    "CARTPOLE_PPO",
    "CNN",
    "MLP",
    "PPO",
    "ActOutput",
    "ActionSpec",
    "ActorCritic",
    "Algorithm",
    "LSTMCore",
    "NetworkConfig",
    "PPOConfig",
    "Policy",
    "Symmetry",
    "stack_fragments",
]
