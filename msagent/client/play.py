"""Playing a Gymnasium env with a downloaded ONNX policy and keeping what an upload needs:
what a simulated game client (``examples/client_loop``) does, without torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class PlayedEpisode:
    """One episode as a client uploads it: steps, the behaviour's log-probs, how it ended."""

    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    log_probs: np.ndarray
    terminated: bool
    truncated: bool

    @property
    def episode_return(self) -> float:
        """Sum of the rewards."""
        return float(self.rewards.sum())

    def upload_fields(self) -> dict[str, Any]:
        """Keyword arguments of ``GatewayClient.upload_episode``."""
        return {"observations": self.observations, "actions": self.actions,
                "rewards": self.rewards, "log_probs": self.log_probs,
                "terminated": self.terminated, "truncated": self.truncated}


def play_episode(env: Any, policy: Any, rng: np.random.Generator, seed: int | None = None,
                 greedy: bool = False) -> PlayedEpisode:
    """Play one episode of ``env`` with ``policy`` (an OnnxPolicy), sampling with ``rng``
    within the env's action masks (``info["action_mask"]``, or observations that are
    ``{"observation", "action_mask"}`` maps, whose ``"observation"`` is what is kept)."""
    raw, info = env.reset(seed=seed)
    steps: list[tuple] = []
    terminated = truncated = False
    while not (terminated or truncated):
        obs, mask = _observed(raw, info)
        action, logp = policy.act(obs, mask, greedy=greedy, rng=rng)
        raw, reward, terminated, truncated, info = env.step(_env_action(policy, action))
        steps.append((obs, action, reward, logp))
    o, a, r, lp = zip(*steps)
    return PlayedEpisode(np.asarray(o, np.float32), np.asarray(a), np.asarray(r, np.float32),
                         np.asarray(lp, np.float32), bool(terminated), bool(truncated))


def _observed(raw: Any, info: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """The observation and the action mask (None when the env gives none) of one step."""
    if isinstance(raw, dict) and set(raw) == {"observation", "action_mask"}:
        return np.asarray(raw["observation"]), np.asarray(raw["action_mask"], bool)
    mask = info.get("action_mask") if isinstance(info, dict) else None
    return np.asarray(raw), None if mask is None else np.asarray(mask, bool)


def _env_action(policy: Any, action: Any) -> Any:
    """What the env is given: a discrete action as an int, a multi-discrete one as its int64
    row; a Box action clipped to its bounds (the raw sample is what is uploaded, with its
    log-probability)."""
    if policy.continuous:
        return policy.clip(action)
    return action if getattr(policy, "nvec", None) else int(action)
