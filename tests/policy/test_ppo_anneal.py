"""PPO's learning-rate decay: over planned updates, or over seconds of updating (for runs that
stop on time), whichever ends first, carried across a checkpoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from msagent.errors import ConfigError
from msagent.policy import PPO, ActionSpec, Policy, PPOConfig
from tests.policy.helpers import acted_fragment

torch.set_num_threads(1)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _ppo(config: PPOConfig, clock: Clock) -> tuple[PPO, list]:
    """A PPO on a tiny policy with a hand-moved clock, and fragments to update on."""
    policy = Policy((4,), ActionSpec.discrete(2), seed=0)
    ppo = PPO(policy, config)
    ppo.clock = clock
    obs = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    return ppo, [acted_fragment(policy, obs, s) for s in range(2)]


def test_the_rate_decays_over_seconds_of_updating_from_the_first_update() -> None:
    clock = Clock()
    ppo, fragments = _ppo(PPOConfig(lr=1e-3, minibatches=1, anneal_lr=True, anneal_s=10.0),
                          clock)
    clock.now += 50  # time before the first update (start-up) is not counted
    rates = []
    for step in (0, 2.5, 5, 12):
        clock.now += step
        rates.append(ppo.update(fragments)["learner/lr"])
    assert rates == pytest.approx([1e-3, 7.5e-4, 2.5e-4, 0.0])


def test_whichever_plan_ends_first_sets_the_rate() -> None:
    clock = Clock()
    config = PPOConfig(lr=1e-3, minibatches=1, anneal_lr=True, anneal_s=100.0, total_updates=4)
    ppo, fragments = _ppo(config, clock)
    rates = [ppo.update(fragments)["learner/lr"] for _ in range(3)]  # the clock stands still
    assert rates == pytest.approx([1e-3, 7.5e-4, 5e-4])
    clock.now += 90  # now 90 % of the seconds: further than 3 of 4 updates
    assert ppo.update(fragments)["learner/lr"] == pytest.approx(1e-4)


def test_a_resumed_learner_goes_on_from_the_seconds_it_had() -> None:
    clock = Clock()
    config = PPOConfig(lr=1e-3, minibatches=1, anneal_lr=True, anneal_s=10.0)
    ppo, fragments = _ppo(config, clock)
    ppo.update(fragments)
    clock.now += 4
    state = ppo.state_dict()
    assert state["updating_s"] == pytest.approx(4.0)
    later = Clock()
    later.now = 5_000.0  # another process: another clock origin
    resumed, _ = _ppo(config, later)
    resumed.load_state_dict(state)
    later.now += 30  # its start-up is not counted either
    assert resumed.update(fragments)["learner/lr"] == pytest.approx(6e-4)


def test_no_decay_without_anneal_lr_and_no_anneal_lr_without_a_plan() -> None:
    clock = Clock()
    ppo, fragments = _ppo(PPOConfig(lr=1e-3, minibatches=1, anneal_s=1.0), clock)
    ppo.update(fragments)
    clock.now += 5
    assert ppo.update(fragments)["learner/lr"] == pytest.approx(1e-3)
    with pytest.raises(ConfigError, match="anneal_lr needs total_updates or anneal_s"):
        PPOConfig(anneal_lr=True)
    with pytest.raises(ConfigError, match="anneal_s must be > 0, got 0"):
        PPOConfig(anneal_lr=True, anneal_s=0)
