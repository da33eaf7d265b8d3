"""Training from stored experience: a run with ``data.source = "store"`` clones a teacher from
episodes in the experience store (as game clients' uploads land there) and publishes ONNX
models that a client without torch plays better than the first one."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.client.onnx_policy import OnnxPolicy
from msagent.errors import ConfigError
from msagent.experience.records import EpisodeRecord, Provenance
from msagent.experience.store import ExperienceStore
from msagent.exporting.model_store import ModelStore
from msagent.train import run_training
from tests.train.helpers import example_config


def teacher_episodes(n: int, seed: int) -> list[EpisodeRecord]:
    """CartPole episodes of a heuristic (pole angle and velocity) with 20 % random actions."""
    env, rng, out = gym.make("CartPole-v1"), np.random.default_rng(seed), []
    for i in range(n):
        obs, _ = env.reset(seed=seed * 1000 + i)
        steps, done = [], False
        while not done:
            action = int(obs[2] + 0.5 * obs[3] > 0) if rng.random() > 0.2 else int(rng.integers(2))
            nxt, reward, terminated, truncated, _ = env.step(action)
            steps.append((obs, action, reward))
            obs, done = nxt, terminated or truncated
        o, a, r = (np.array(x) for x in zip(*steps))
        out.append(EpisodeRecord("cartpole", f"t{i}", o.astype(np.float32), a,
                                 r.astype(np.float32), None, terminated, truncated,
                                 Provenance("teacher", 1000.0 + i)))
    return out


def greedy_return(policy: OnnxPolicy, episodes: int = 5) -> float:
    """Mean return of the policy's most likely actions on fresh CartPole episodes."""
    env, total = gym.make("CartPole-v1"), 0.0
    for i in range(episodes):
        obs, _ = env.reset(seed=90_000 + i)
        done = False
        while not done:
            actions, _ = policy.act(obs, greedy=True)
            obs, reward, terminated, truncated, _ = env.step(int(actions))
            total += reward
            done = terminated or truncated
    return total / episodes


@pytest.mark.slow
def test_a_run_on_stored_episodes_clones_the_teacher_and_publishes_better_models(tmp_path):
    store_dir, models = tmp_path / "experience", tmp_path / "models"
    ExperienceStore(str(store_dir)).write(teacher_episodes(60, seed=0))
    cfg = example_config(tmp_path, "local", 'data.source="store"',
                         f'data.store="{store_dir}"', 'data.game="cartpole"',
                         "data.streams=16", "data.refresh_s=0.5", "data.max_uses=0", 'data.order="uniform"', 'algorithm.name="bc"',
                         "algorithm.lr=0.003", "algorithm.ent_coef=0.0",
                         f'publish.models="{models}"', 'publish.game="cartpole"',
                         "publish.every_snapshots=5", "run.stop.env_steps=60000",
                         "run.stop.mean_return=0", "run.stop.time_s=240")
    result = run_training(cfg)
    store = ModelStore(str(models))
    versions = store.versions("cartpole")
    assert result["updates"] > 0 and len(versions) >= 2
    first = OnnxPolicy(store.read("cartpole", versions[0]))
    last = OnnxPolicy(store.read("cartpole", versions[-1]))
    assert store.latest("cartpole").source["param_version"] == result["policy_version"]
    assert greedy_return(last) > greedy_return(first) + 150


def test_ppo_on_stored_experience_is_refused_with_the_fix(tmp_path):
    cfg = example_config(tmp_path, "local", 'data.source="store"', 'data.store="x"',
                         'data.game="cartpole"')
    with pytest.raises(ConfigError, match="impala.*bc"):
        run_training(cfg)
