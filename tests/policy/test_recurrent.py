"""Recurrent policies: the state an env worker carries reproduces acting exactly in the learner,
and memory solves a task that a feed-forward policy cannot."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from msagent.envs import policy_act, solo_collector
from msagent.policy import PPO, NetworkConfig, Policy, PPOConfig
from msagent.policy.algorithms.base import evaluate_steps
from msagent.vocabulary import Columns, ModelKey

torch.set_num_threads(1)


class CueRecall(gym.Env):
    """A cue (+1 or -1) is shown at the first step only; after ``delay`` blank steps a query
    flag asks which it was: +1 for the right action, -1 for the wrong one. Without memory the
    best expected return is 0."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, delay: int = 3) -> None:
        self.delay, self.t, self.cue = delay, 0, 0
        self.rng = np.random.default_rng(0)

    def _obs(self) -> np.ndarray:
        """Cue at t=0, blanks, then the query flag."""
        obs = np.zeros(3, np.float32)
        if self.t == 0:
            obs[0] = 1.0 if self.cue else -1.0
        obs[2] = 1.0 if self.t == self.delay + 1 else 0.0
        obs[1] = self.t / (self.delay + 1)
        return obs

    def reset(self, *, seed=None, options=None):
        """A new cue."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.t, self.cue = 0, int(self.rng.integers(2))
        return self._obs(), {}

    def step(self, action):
        """Blank steps pay nothing; the query step pays +-1 and ends the episode."""
        if self.t == self.delay + 1:
            return self._obs(), (1.0 if int(action) == self.cue else -1.0), True, False, {}
        self.t += 1
        return self._obs(), 0.0, False, False, {}


def _train(lstm: int, updates: int, seed: int = 0) -> float:
    """Mean return of the last 200 episodes after PPO on CueRecall."""
    policy = Policy(CueRecall.observation_space, CueRecall.action_space,
                    NetworkConfig(hidden=(32,), lstm=lstm), seed=seed)
    ppo = PPO(policy, PPOConfig(lr=3e-3, epochs=4, minibatches=4, ent_coef=0.01, seed=seed))
    collector = solo_collector(lambda: CueRecall(), 16, policy_act(policy, ModelKey("m", 1)),
                               length=20, seed=seed)
    returns: list[float] = []
    for _ in range(updates):
        ppo.update(collector.collect())
        collector.act_again()
        returns += [r.episode_return for r in collector.take_results()]
    return float(np.mean(returns[-200:]))


@pytest.mark.slow
def test_memory_task_is_solved_by_a_recurrent_policy_only() -> None:
    recurrent = _train(lstm=32, updates=60)
    feed_forward = _train(lstm=0, updates=60)
    assert recurrent >= 0.9, recurrent
    assert feed_forward <= 0.3, feed_forward


def test_stored_state_reproduces_acting_log_probs_exactly() -> None:
    policy = Policy((4,), gym.spaces.Discrete(2), NetworkConfig(hidden=(16,), lstm=8), seed=3)
    make = lambda: gym.make("CartPole-v1", max_episode_steps=9)  # noqa: E731
    collector = solo_collector(make, 4, policy_act(policy, ModelKey("m", 1)), length=12, seed=0)
    collector.collect()
    fragments = collector.collect()  # the second ones start mid-episode, with a live state
    assert all(f.initial_state is not None and f.initial_state.shape == (32,) for f in fragments)
    assert any(np.abs(f.initial_state).sum() > 0 for f in fragments)
    assert any(f.terminated.any() or f.truncated.any() for f in fragments)  # resets inside
    batch = PPO(policy).prepare(fragments)
    with torch.no_grad():
        logp, _, values = evaluate_steps(policy, batch)
    np.testing.assert_allclose(logp.numpy(), np.concatenate([f.logp for f in fragments]),
                               atol=1e-5)
    np.testing.assert_allclose(values.numpy(), np.concatenate([f.values for f in fragments]),
                               atol=1e-5)
    # IMPALA replays the same sequences: at the acting weights its ratios are exactly 1
    from msagent.policy.algorithms.impala import IMPALA

    impala = IMPALA(policy)
    with torch.no_grad():
        _, stats = impala.compute_loss(impala.prepare(fragments))
    assert abs(float(stats["losses/approx_kl"])) < 1e-6
    # without the stored state the replay differs: the state really carries memory
    zeroed = dict(batch, **{Columns.INITIAL_STATE: torch.zeros_like(batch[Columns.INITIAL_STATE])})
    with torch.no_grad():
        logp_zero, _, _ = evaluate_steps(policy, zeroed)
    assert not np.allclose(logp_zero.numpy(), logp.numpy(), atol=1e-5)


def test_act_carries_state_and_refuses_a_wrong_shape() -> None:
    policy = Policy((3,), gym.spaces.Discrete(2), NetworkConfig(hidden=(8,), lstm=4), seed=0)
    obs = np.ones((2, 3), np.float32)
    first = policy.act(obs, deterministic=True)
    assert first.state.shape == (2, 16) and policy.state_size == 16
    second = policy.act(obs, deterministic=True, state=first.state)
    assert not np.allclose(second.state, first.state)
    with pytest.raises(Exception, match=r"state batch has shape \(2, 5\).*\[2, 16\]"):
        policy.act(obs, state=np.zeros((2, 5), np.float32))
    assert Policy((3,), gym.spaces.Discrete(2), seed=0).act(obs).state is None


def test_weights_round_trip_and_onnx_export_is_refused_clearly() -> None:
    from msagent.errors import UserError
    from msagent.exporting.onnx_export import export_onnx

    net = NetworkConfig(hidden=(8,), lstm=4)
    a = Policy((3,), gym.spaces.Discrete(2), net, seed=0)
    b = Policy((3,), gym.spaces.Discrete(2), net, seed=1)
    b.set_weights(a.get_weights())
    obs = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(a.act(obs).values, b.act(obs).values)
    with pytest.raises(UserError, match="LSTM core"):
        export_onnx(a)
