"""A user's own algorithm, through msagent's Algorithm interface only: double DQN from a replay
table that samples uniformly, with its own target network.

    [algorithm]
    script = "algorithms/dqn.py"        # relative to the TOML, like every script
    [algorithm.settings]                # validated by Settings below
    lr = 0.0005

The policy's actor head is read as Q-values; the agent script ``dqn_agent.py`` acts on them
epsilon-greedily (a ``Policy`` whose ``act`` it overrides). The replay table does the rest:
``sampler = "uniform"`` draws old and new fragments alike, ``max_times_sampled`` retires a
fragment after that many draws, and the learner's ``max_policy_lag`` is set high, as the
update is off-policy. Transitions are the steps of a fragment that have their next observation
in it (a fragment's last step, and a step cut by a time limit, are left out).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
import torch.nn.functional as F
from pydantic import BaseModel, ConfigDict, Field

from msagent.policy.algorithms import Algorithm
from msagent.policy.algorithms.base import stack_fragments
from msagent.vocabulary import Columns


class Settings(BaseModel):
    """The ``[algorithm.settings]`` table (unknown keys and out-of-range values refused)."""

    model_config = ConfigDict(extra="forbid")
    lr: float = Field(0.0005, gt=0)
    gamma: float = Field(0.99, gt=0, le=1)
    minibatch: int = Field(256, ge=1)
    """Transitions per gradient step."""
    steps_per_update: int = Field(4, ge=1)
    """Gradient steps on each batch the learner samples."""
    target_every: int = Field(25, ge=1)
    """Updates between copies of the network into the target network."""
    max_grad_norm: float = Field(10.0, gt=0)


def make_algorithm(policy: Any, settings: Settings) -> Algorithm:
    """What ``[algorithm] script`` asks of this file."""
    return DoubleDQN(policy, settings)


class DoubleDQN(Algorithm):
    """Double DQN: the online network picks the next action, the target network values it."""

    def __init__(self, policy: Any, settings: Settings) -> None:
        self.policy, self.settings = policy, settings
        self.target = copy.deepcopy(policy.model).requires_grad_(False)
        self.optimizer = torch.optim.Adam(policy.model.actor.parameters(), lr=settings.lr)
        self.updates = 0
        self._gen = torch.Generator().manual_seed(0)

    def q_values(self, model: Any, obs: torch.Tensor) -> torch.Tensor:
        """Q(s, .) of ``model``: its actor head."""
        return model.actor(obs)

    def update(self, fragments: list[Any]) -> dict[str, float]:
        """A few minibatch steps of the double-DQN loss; the target follows every so often."""
        obs, actions, rewards, next_obs, done = self._transitions(fragments)
        where = f"update {self.updates + 1}"
        for _ in range(self.settings.steps_per_update):
            pick = torch.randint(len(obs), (min(self.settings.minibatch, len(obs)),),
                                 generator=self._gen)
            loss, q = self._loss(obs[pick], actions[pick], rewards[pick], next_obs[pick],
                                 done[pick])
            norm = self.apply_gradients(loss, self.optimizer, self.settings.max_grad_norm, where)
        self.updates += 1
        if self.updates % self.settings.target_every == 0:
            self.target.load_state_dict(self.policy.model.state_dict())
        self.policy.invalidate_cache()
        return {"losses/td": float(loss.detach()), "losses/q_mean": float(q.mean().detach()),
                "losses/grad_norm": norm, "losses/transitions": float(len(obs))}

    def _loss(self, obs: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor,
              next_obs: torch.Tensor, done: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The Huber TD error of the taken actions, and their Q-values."""
        q = self.q_values(self.policy.model, obs).gather(1, actions[:, None]).squeeze(1)
        with torch.no_grad():
            best = self.q_values(self.policy.model, next_obs).argmax(1, keepdim=True)
            following = self.q_values(self.target, next_obs).gather(1, best).squeeze(1)
            target = rewards + self.settings.gamma * (1.0 - done) * following
        return F.smooth_l1_loss(q, target), q

    def _transitions(self, fragments: list[Any]) -> tuple[torch.Tensor, ...]:
        """(obs, action, reward, next obs, terminated) of every step whose next observation
        is in its fragment and is not a new episode's first (a time limit's cut)."""
        batch = stack_fragments(fragments)
        self.refuse_non_finite(batch, f"update {self.updates + 1}")
        obs, actions = batch[Columns.OBS], batch[Columns.ACTIONS].long()
        terminated = batch[Columns.TERMINATED].float()
        keep = (batch[Columns.TRUNCATED][:, :-1] == 0).flatten()  # [B, T-1] steps
        flat = lambda x: x.flatten(0, 1)[keep]  # noqa: E731
        return (flat(obs[:, :-1]), flat(actions[:, :-1]), flat(batch[Columns.REWARDS][:, :-1]),
                flat(obs[:, 1:]), flat(terminated[:, :-1]))

    def state_dict(self) -> dict[str, Any]:
        """The optimizer, the target network and the update count, for checkpoints."""
        return {"optimizer": self.optimizer.state_dict(), "updates": self.updates,
                "target": self.target.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Go on from a checkpoint."""
        self.optimizer.load_state_dict(state["optimizer"])
        self.target.load_state_dict(state["target"])
        self.updates = state["updates"]
