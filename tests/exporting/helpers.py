"""Policies of every network and action-head kind, with observations to check them on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from msagent.policy import ActionSpec, NetworkConfig, Policy
from msagent.exporting.onnx_export import ObsDtype, example_inputs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TICTACTOE = EXAMPLES / "tictactoe"


@dataclass
class Case:
    """A policy, how its graph is exported, and observations (with masks) to check it on."""

    policy: Policy
    masked: bool
    obs_dtype: ObsDtype
    feeds: dict[str, np.ndarray]


def gym_observations(env_id: str, steps: int = 200, seed: int = 0) -> np.ndarray:
    """Observations of random play in a Gymnasium env (real states, not noise)."""
    env = gym.make(env_id)
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    seen = []
    for _ in range(steps):
        seen.append(obs)
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return np.stack(seen).astype(np.float32)


def tictactoe_case() -> Case:
    """The tic-tac-toe example's policy (small-grid CNN) on real boards with legal masks."""
    from msagent.exporting.run_export import sample_game
    from msagent.user_scripts import build_policy

    env, agent = str(TICTACTOE / "tictactoe_env.py"), str(TICTACTOE / "tictactoe_agent.py")
    sample = sample_game(env, {}, turns=200, seed=3)
    assert sample.masked and sample.obs_dtype == "float32"
    return Case(build_policy(env, agent, {}, seed=3), True, "float32", sample.feeds)


def make_case(name: str) -> Case:
    """One of :data:`CASES` by name."""
    if name == "cartpole":
        env = gym.make("CartPole-v1")
        policy = Policy(env.observation_space, env.action_space, seed=1)
        return Case(policy, False, "float32", {"obs": gym_observations("CartPole-v1")})
    if name == "pendulum":
        env = gym.make("Pendulum-v1")
        policy = Policy(env.observation_space, env.action_space, NetworkConfig(init_log_std=-0.5),
                        seed=2)
        return Case(policy, False, "float32", {"obs": gym_observations("Pendulum-v1")})
    if name == "masked_mlp":
        policy = Policy((10,), ActionSpec.discrete(6), NetworkConfig(activation="relu"), seed=4)
        return Case(policy, True, "float32", example_inputs(policy, True, "float32", 64, 9))
    if name == "flat_planes":
        network = NetworkConfig(hidden=(32, 32), activation="relu", flatten=True)
        policy = Policy(gym.spaces.Box(0, 1, (6, 7, 2)), ActionSpec.discrete(7), network, seed=5)
        return Case(policy, True, "float32", example_inputs(policy, True, "float32", 64, 9))
    if name == "cnn_atari":
        space = gym.spaces.Box(0, 255, (84, 84, 4), np.uint8)
        policy = Policy(space, ActionSpec.discrete(6), NetworkConfig(cnn_features=64), seed=6)
        return Case(policy, True, "uint8", example_inputs(policy, True, "uint8", 16, 9))
    if name == "shared_cnn":
        space = gym.spaces.Box(0, 255, (42, 42, 4), np.uint8)
        network = NetworkConfig(cnn_features=64, shared=True)
        policy = Policy(space, ActionSpec.discrete(18), network, seed=7)
        return Case(policy, False, "uint8", example_inputs(policy, False, "uint8", 16, 9))
    if name == "multi_discrete":
        policy = Policy((8,), ActionSpec.multi_discrete((3, 2, 4)), NetworkConfig(), seed=8)
        return Case(policy, True, "float32", example_inputs(policy, True, "float32", 64, 9))
    if name == "tictactoe_cnn":
        return tictactoe_case()
    raise KeyError(name)


CASES = ("cartpole", "pendulum", "masked_mlp", "flat_planes", "cnn_atari", "shared_cnn",
         "multi_discrete", "tictactoe_cnn")
"""MLP (CartPole), Box actions (Pendulum), masked MLP, flattened planes, an 84x84x4 uint8
CNN, a shared-torso 42x42x4 uint8 CNN, masked MultiDiscrete([3, 2, 4]) actions, and the
tic-tac-toe example's small-grid CNN on real boards."""


def greedy(logits: np.ndarray, nvec: tuple[int, ...] | None) -> np.ndarray:
    """The most likely action of each row (of each component for multi-discrete logits)."""
    if nvec is None:
        return logits.argmax(-1)
    parts = np.split(logits, np.cumsum(nvec)[:-1], axis=-1)
    return np.stack([p.argmax(-1) for p in parts], axis=-1)


def legal(mask: np.ndarray, actions: np.ndarray, nvec: tuple[int, ...] | None) -> bool:
    """Whether every row's action (every component's choice) is allowed by its mask."""
    rows = np.arange(len(actions))
    if nvec is None:
        return bool(mask[rows, actions].all())
    starts = np.concatenate([[0], np.cumsum(nvec)[:-1]])
    return bool(mask[rows[:, None], starts + actions].all())


def torch_logp(policy: Policy, obs: np.ndarray, actions: np.ndarray,
               mask: np.ndarray | None) -> np.ndarray:
    """The PyTorch policy's log-probabilities of given actions."""
    import torch

    with torch.no_grad():
        logp, _, _ = policy.evaluate(obs, actions, mask)
    return logp.numpy()


def as_dict(value: Any) -> dict[str, Any]:
    """A manifest (pydantic model or dict) as a plain dict."""
    return value.model_dump() if hasattr(value, "model_dump") else dict(value)
