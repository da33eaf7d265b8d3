"""Team games: the league seats sides, every seat of a side plays the side's policy, and the
outcome is decided between sides."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.collector import Acted
from msagent.envs.match_collector import MatchCollector
from msagent.envs.multi_agent import Turn
from msagent.envs.teams import num_sides, seat_match, teams_of
from msagent.errors import ScriptError
from msagent.policy import ActOutput
from msagent.vocabulary import Match, ModelKey, PolicyRef

MAIN, FROZEN = PolicyRef.player("main"), PolicyRef.snapshot(ModelKey("main", 2))


class TwoVsTwo:
    """Four seats, two per side, all acting each step; a side scores the sum of its actions,
    shared by its seats; the game lasts ``steps`` steps."""

    seats = ("left_0", "left_1", "right_0", "right_1")
    teams = (0, 0, 1, 1)
    observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, steps: int = 3) -> None:
        self.steps, self.t = steps, 0

    def _turn(self, rewards: np.ndarray) -> Turn:
        done = self.t >= self.steps
        obs = {} if done else {s: np.array([self.t], np.float32) for s in range(4)}
        return Turn(() if done else (0, 1, 2, 3), obs, None, rewards, terminated=done)

    def reset(self, seed=None) -> Turn:
        self.t = 0
        return self._turn(np.zeros(4))

    def step(self, actions) -> Turn:
        self.t += 1
        left, right = actions[0] + actions[1], actions[2] + actions[3]
        return self._turn(np.array([left, left, right, right], float))

    def close(self) -> None:
        pass


def act_by_policy(calls: list):
    """main plays 2, the snapshot plays 1: main's side wins every game."""
    def act(groups):
        calls.append({ref: len(group[0]) for ref, group in groups.items()})
        return {ref: Acted(ActOutput(np.full(len(obs), 2 if ref == MAIN else 1, np.int64),
                                     np.zeros(len(obs), np.float32),
                                     np.zeros(len(obs), np.float32)), ModelKey(ref.name, 5))
                for ref, (obs, _masks, _states) in groups.items()}
    return act


def test_sides_are_seated_with_their_policy_and_the_outcome_is_decided_between_sides() -> None:
    calls: list = []
    collector = MatchCollector([TwoVsTwo()], act_by_policy(calls), lambda k: Match((FROZEN, MAIN), 1),
                               length=3, seed=0)
    fragments = collector.collect()
    assert calls[0] == {FROZEN: 2, MAIN: 2}  # each policy decides both seats of its side
    assert len(fragments) == 2  # one stream per seat main holds
    assert all(f.rewards.tolist() == [4.0, 4.0, 4.0] for f in fragments)  # 2 + 2 each step
    (result,) = collector.take_results()
    assert result.outcome == 1.0 and result.match == Match((FROZEN, MAIN), 1)
    assert result.seat_returns == (6.0, 12.0) and result.episode_return == 12.0


def test_seat_match_and_validation() -> None:
    game = TwoVsTwo()
    assert teams_of(game) == (0, 0, 1, 1) and num_sides(game) == 2
    assert seat_match(Match((MAIN, FROZEN), 0), game.teams) == Match((MAIN, MAIN, FROZEN, FROZEN), 0)
    assert seat_match(Match((FROZEN, MAIN), 1), game.teams).learner_seat == 2
    with pytest.raises(ValueError, match="3 sides was handed to a game with 2 sides"):
        seat_match(Match((MAIN, FROZEN, FROZEN), 0), game.teams)
    game.teams = (0, 0, 2, 2)
    with pytest.raises(ScriptError, match="no side empty"):
        teams_of(game)
