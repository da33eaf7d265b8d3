"""MatchCollector and Stream: learner-seat credit assignment, fragments, results, re-deciding."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.collector import Acted
from msagent.envs.match_collector import MAX_FAILURES_IN_A_ROW, MatchCollector
from msagent.envs.multi_agent import Turn
from msagent.errors import IllegalActionError
from msagent.policy import ActOutput
from msagent.vocabulary import Match, ModelKey, PolicyRef


class Alternate:
    """Two seats alternate for ``turns`` turns; the mover earns its action; at the end the seat
    that did not move last earns ``final`` (like a loser's -1 in connect four)."""

    seats = ("a", "b")
    observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, turns: int = 4, final: float = 10.0) -> None:
        self.turns, self.final, self.t = turns, final, 0

    def _turn(self, rewards: np.ndarray, done: bool = False) -> Turn:
        seat = self.t % 2
        obs = {} if done else {seat: np.array([self.t], np.float32)}
        return Turn(() if done else (seat,), obs, None if done else
                    {seat: np.array([True, True])}, rewards, terminated=done)

    def reset(self, seed=None) -> Turn:
        self.t = 0
        return self._turn(np.zeros(2))

    def step(self, actions) -> Turn:
        (seat, action), = actions.items()
        rewards = np.zeros(2)
        rewards[seat] += float(action)
        self.t += 1
        done = self.t >= self.turns
        if done:
            rewards[1 - seat] += self.final
        return self._turn(rewards, done)

    def close(self) -> None:
        pass


def act_ones(calls: list) -> callable:
    """Every seat plays 1; value = observation; version grows with each call."""
    def act(groups):
        calls.append(groups)
        out = {}
        for ref, (obs, masks, _states) in groups.items():
            n = len(obs)
            out[ref] = Acted(ActOutput(np.ones(n, np.int64), np.full(n, -0.5, np.float32),
                                       obs[:, 0].astype(np.float32)), ModelKey(ref.name, 7))
        return out
    return act


def seating(learner_seat: int) -> Match:
    """main in the learner seat against a frozen snapshot."""
    seats = [PolicyRef.snapshot(ModelKey("main", 3))] * 2
    seats[learner_seat] = PolicyRef.player("main")
    return Match(tuple(seats), learner_seat)


def test_learner_seat_rows_get_rewards_until_its_next_decision_and_the_terminal_reward() -> None:
    calls: list = []
    collector = MatchCollector([Alternate()], act_ones(calls), lambda k: seating(0), 2, seed=0)
    fragments = collector.collect() + collector.collect()
    assert len(fragments) == 1  # 4 turns: seat a decided twice = one fragment of T=2
    f = fragments[0]
    assert f.obs[:, 0].tolist() == [0.0, 2.0]  # a acts on turns 0 and 2
    # its own action, then its action + the final reward earned on b's last move
    assert f.rewards.tolist() == [1.0, 11.0]
    assert f.terminated.tolist() == [False, True] and f.policy == ModelKey("main", 7)
    assert f.values.tolist() == [0.0, 2.0] and f.action_mask.shape == (2, 2)


def test_results_name_the_match_and_the_outcome_from_the_learner_seat() -> None:
    collector = MatchCollector([Alternate(final=-10.0)], act_ones([]), lambda k: seating(0), 2,
                               seed=0)
    collector.collect(), collector.collect()
    (result,) = collector.take_results()
    assert result.match == seating(0) and result.length == 4
    assert result.seat_returns == (-8.0, 2.0) and result.outcome == -1.0  # a got the -10
    assert result.episode_return == -8.0 and collector.take_results() == []


def test_groups_batch_every_game_seat_played_by_one_policy_in_one_call() -> None:
    calls: list = []
    envs = [Alternate(), Alternate()]
    MatchCollector(envs, act_ones(calls), lambda k: seating(k), 2, seed=0).collect()
    first = calls[0]
    # slot 0: seat a (turn 0) is main; slot 1: seat a is the snapshot
    assert set(first) == {PolicyRef.player("main"), PolicyRef.snapshot(ModelKey("main", 3))}
    assert all(len(obs) == 1 and states is None for obs, _, states in first.values())


def test_fragments_cross_game_boundaries_and_bootstrap_from_the_next_decision() -> None:
    collector = MatchCollector([Alternate(turns=2, final=0.0)], act_ones([]),
                               lambda k: seating(0), 3, seed=0)
    fragments = []
    for _ in range(4):
        fragments += collector.collect()
    # seat a decides once per 2-turn game: 3 games make one fragment of 3 terminated rows
    assert fragments and all(f.terminated.all() for f in fragments)
    assert fragments[0].bootstrap_value == 0.0


class NanAt(Alternate):
    """Alternate, but turn 2's observation is NaN."""

    def _turn(self, rewards, done=False):
        turn = super()._turn(rewards, done)
        if self.t == 2:
            turn.obs = {s: np.array([np.nan], np.float32) for s in turn.obs}
        return turn


def test_a_non_finite_observation_is_refused_naming_the_env_and_the_step() -> None:
    from msagent.envs.checks import ObsChecker
    from msagent.errors import EnvDataError

    checker = ObsChecker(Alternate.observation_space, "league worker #0")
    collector = MatchCollector([Alternate(), NanAt()], act_ones([]), lambda k: seating(0), 4,
                               seed=0, checker=checker)
    try:
        collector.collect()
    except EnvDataError as exc:
        assert "env 1 of league worker #0, step 2" in str(exc) and "nan" in str(exc)
    else:
        raise AssertionError("the NaN observation was accepted")


def test_every_seat_a_trainable_player_holds_is_recorded_for_that_player() -> None:
    exploiter = PolicyRef.player("exploiter")
    matches = [Match((PolicyRef.player("main"), PolicyRef.player("main")), 0),  # self-play
               Match((exploiter, PolicyRef.player("main")), 0)]
    collector = MatchCollector([Alternate(), Alternate()], act_ones([]), lambda k: matches[k],
                               2, seed=0)
    fragments = collector.collect() + collector.collect()
    by_player = sorted(f.policy.policy_id for f in fragments)
    # slot 0: both of main's seats; slot 1: the exploiter's seat and main's seat
    assert by_player == ["exploiter", "main", "main", "main"]
    (a, b, *_) = [f for f in fragments if f.policy.policy_id == "main"]
    assert {float(a.obs[0, 0]), float(b.obs[0, 0])} == {0.0, 1.0}  # seat a and seat b


def test_fragments_learn_the_clipped_rewards_and_results_report_the_games_points() -> None:
    from msagent.envs.wrappers import ClipReward

    collector = MatchCollector([ClipReward(Alternate(final=-10.0))], act_ones([]),
                               lambda k: seating(0), 2, seed=0)
    fragments = collector.collect() + collector.collect()
    assert fragments[0].rewards.tolist() == [1.0, 0.0]  # sign(1), then sign(1) + sign(-10)
    (result,) = collector.take_results()
    assert result.seat_returns == (-8.0, 2.0) and result.outcome == -1.0  # the points


class CrashAt(Alternate):
    """Alternate whose ``crash``-th step call raises ``error``, as a crashed game engine does."""

    def __init__(self, crash: int, error: Exception | None = None) -> None:
        super().__init__()
        self.crash, self.calls = crash, 0
        self.error = error or RuntimeError("the engine crashed")
        self.closed = False

    def step(self, actions) -> Turn:
        self.calls += 1
        if self.calls == self.crash:
            raise self.error
        return super().step(actions)

    def close(self) -> None:
        self.closed = True


def test_a_game_whose_env_raises_is_dropped_and_its_slot_goes_on_with_a_fresh_env() -> None:
    broken = CrashAt(3)  # seat a's second decision is open when the engine crashes
    collector = MatchCollector([broken], act_ones([]), lambda k: seating(0), 2, seed=0,
                               remake=Alternate)
    fragments = [f for _ in range(6) for f in collector.collect()]
    assert collector.take_env_errors() == [
        "game 0 broke off at its step 3: RuntimeError: the engine crashed"]
    assert broken.closed and collector.slots[0].env is not broken
    # a's open decision ends truncated, valued by its own estimate (the obs, 2.0); then the
    # fresh env's whole games: 12 steps = the broken game's 3 + 2 games + 1 step
    first, *rest = fragments
    assert first.rewards.tolist() == [1.0, 0.0] and first.truncated.tolist() == [False, True]
    assert first.final_values.tolist() == [0.0, 2.0] and not first.terminated.any()
    assert len(rest) == 2 and all(f.rewards.tolist() == [1.0, 11.0] for f in rest)
    assert [r.length for r in collector.take_results()] == [4, 4]  # the broken game: never
    assert collector.take_env_errors() == []


def test_an_env_error_is_raised_without_remake_for_msagent_errors_and_for_a_broken_env() -> None:
    with pytest.raises(RuntimeError, match="the engine crashed"):
        MatchCollector([CrashAt(1)], act_ones([]), lambda k: seating(0), 2, seed=0).collect()
    illegal = CrashAt(1, IllegalActionError("action 5 is not legal"))
    with pytest.raises(IllegalActionError):
        MatchCollector([illegal], act_ones([]), lambda k: seating(0), 2, seed=0,
                       remake=Alternate).collect()
    fresh = MatchCollector([CrashAt(1)], act_ones([]), lambda k: seating(0), 2, seed=0,
                           remake=lambda: CrashAt(1))
    with pytest.raises(RuntimeError):  # every fresh env fails too: it is broken, not flaky
        for _ in range(MAX_FAILURES_IN_A_ROW):
            fresh.collect()
    assert len(fresh.take_env_errors()) == MAX_FAILURES_IN_A_ROW


class Lever:
    """One seat pushes a lever in [-1, 1] for 3 steps; an action out of bounds is refused, as
    the Gymnasium adapter refuses one."""

    seats = ("a",)
    observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
    action_space = gym.spaces.Box(-1, 1, (1,), np.float32)

    def __init__(self) -> None:
        self.given: list[float] = []

    def reset(self, seed=None) -> Turn:
        return Turn((0,), {0: np.zeros(1, np.float32)}, None, np.zeros(1))

    def step(self, actions) -> Turn:
        action = actions[0]
        if not self.action_space.contains(action):
            raise IllegalActionError(f"{action} is outside the bounds")
        self.given.append(float(action[0]))
        done = len(self.given) % 3 == 0
        return Turn(() if done else (0,), {} if done else {0: np.zeros(1, np.float32)}, None,
                    np.array([float(action[0])]), terminated=done)

    def close(self) -> None:
        pass


def test_box_samples_are_clipped_for_the_game_and_recorded_as_sampled() -> None:
    samples = iter([3.0, -0.5, -2.0, 0.25] * 3)

    def act(groups):
        (ref, (obs, _, _)), = groups.items()
        sample = np.array([[next(samples)]], np.float32)
        return {ref: Acted(ActOutput(sample, np.zeros(1, np.float32), np.zeros(1, np.float32)),
                           ModelKey("main", 1))}

    env = Lever()
    seat = Match((PolicyRef.player("main"),), 0)
    (fragment,) = MatchCollector([env], act, lambda k: seat, 4, seed=0).collect()
    assert env.given == [1.0, -0.5, -1.0, 0.25]  # what the game got: inside its bounds
    assert fragment.actions[:, 0].tolist() == [3.0, -0.5, -2.0, 0.25]  # the samples' logps
    assert fragment.rewards.tolist() == [1.0, -0.5, -1.0, 0.25]
