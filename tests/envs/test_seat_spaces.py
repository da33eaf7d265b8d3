"""Games whose seats observe (or act in) different spaces, as MPE's predator and prey do: a clear
refusal naming the fix, ``PadObservations``, and continuous actions in ``play_games`` and bots."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.utils.env import ParallelEnv

from msagent.envs.adapters import as_multi_agent
from msagent.envs.bots import load_bot
from msagent.envs.play import play_games
from msagent.envs.wrappers import FrameStack, PadObservations
from msagent.errors import ScriptError


class Chase(ParallelEnv):
    """A 1-d chase: the hunter sees (its x, the prey's x, time), the prey a 2x2 view; each moves
    by its Box(-1, 1, (1,)) action. The hunter earns minus the distance, the prey the distance."""

    metadata = {"name": "chase_v0"}

    def __init__(self, steps: int = 5, prey_actions: gym.Space | None = None,
                 oversized: bool = False) -> None:
        self.possible_agents = ["hunter", "prey"]
        self.steps, self.oversized = steps, oversized
        self._obs = {"hunter": gym.spaces.Box(-10, 10, (3,), np.float32),
                     "prey": gym.spaces.Box(-10, 10, (2, 2), np.float32)}
        move = gym.spaces.Box(-1, 1, (1,), np.float32)
        self._act = {"hunter": move, "prey": prey_actions or move}
        self.moves: list[dict[str, np.ndarray]] = []

    def observation_space(self, agent: str) -> gym.Space:
        return self._obs[agent]

    def action_space(self, agent: str) -> gym.Space:
        return self._act[agent]

    def reset(self, seed=None, options=None):
        self.agents, self.t, self.x = list(self.possible_agents), 0, {"hunter": 0.0, "prey": 3.0}
        return self._observe(), {a: {} for a in self.agents}

    def step(self, actions):
        self.moves.append(actions)
        for agent, action in actions.items():
            self.x[agent] += float(np.asarray(action).reshape(-1)[0])
        self.t += 1
        gap = abs(self.x["hunter"] - self.x["prey"])
        obs, over = self._observe(), self.t >= self.steps
        rewards = {"hunter": -gap, "prey": gap}
        flags = {a: over for a in self.agents}
        if over:
            self.agents = []
        return obs, rewards, {a: False for a in flags}, flags, {a: {} for a in flags}

    def _observe(self) -> dict[str, np.ndarray]:
        h, p, t = self.x["hunter"], self.x["prey"], self.t
        hunter = np.array([h, p, t] + [7.0, 7.0] * self.oversized, np.float32)
        return {"hunter": hunter, "prey": np.array([[p, h], [t, 1.0]], np.float32)}


def test_seats_observing_different_spaces_are_refused_naming_each_seat_and_the_fix() -> None:
    with pytest.raises(ScriptError, match=r"chase_v0 have different observation spaces "
                       r"\(hunter: Box.*\(3,\).*; prey: Box.*\(2, 2\).*PadObservations"):
        as_multi_agent(Chase())
    with pytest.raises(ScriptError, match="PadObservations"):
        FrameStack(Chase(), 2)  # another wrapper needs one space too


def test_seats_acting_in_different_spaces_are_refused() -> None:
    with pytest.raises(ScriptError, match=r"different action spaces \(hunter: Box.*; "
                       r"prey: Discrete\(3\)\)"):
        PadObservations(Chase(prey_actions=gym.spaces.Discrete(3)))


def test_pad_observations_pads_each_seat_and_appends_its_one_hot() -> None:
    env = PadObservations(Chase())
    space = env.observation_space
    assert space.shape == (6,) and space.dtype == np.float32
    assert space.low.tolist() == [-10, -10, -10, -10, 0, 0]
    assert space.high.tolist() == [10, 10, 10, 10, 1, 1]
    turn = env.reset(seed=0)
    assert turn.obs[0].tolist() == [0, 3, 0, 0, 1, 0]  # hunter: 3 values, a zero, seat 0
    assert turn.obs[1].tolist() == [3, 0, 0, 1, 0, 1]  # prey: its 2x2 raveled, seat 1
    for _ in range(5):
        turn = env.step({0: np.array([1.0], np.float32), 1: np.array([0.5], np.float32)})
    assert turn.truncated and turn.final_obs[0].tolist() == [5, 5.5, 5, 0, 1, 0]
    assert all(space.contains(o) for o in turn.final_obs.values())


def test_pad_observations_without_the_one_hot_and_with_an_oversized_observation() -> None:
    env = PadObservations(Chase(), seat_one_hot=False)
    assert env.observation_space.shape == (4,)
    assert env.reset().obs[0].tolist() == [0, 3, 0, 0]
    with pytest.raises(ScriptError, match="observation of 5 values, more than any seat's "
                       r"space holds \(4\)"):
        PadObservations(Chase(oversized=True)).reset()


def test_play_games_clips_continuous_actions_and_keeps_their_shape() -> None:
    game = Chase()

    def lunge(obs: np.ndarray, masks) -> np.ndarray:
        return np.full((len(obs), 1), 3.0, np.float32)  # outside Box(-1, 1)

    records = play_games(lambda: PadObservations(game), [lunge, lunge], 2, seed=0)
    assert [r.length for r in records] == [5, 5]
    moves = [a for step in game.moves for a in step.values()]
    assert all(isinstance(a, np.ndarray) and a.shape == (1,) for a in moves)
    assert {float(a[0]) for a in moves} == {1.0}


def test_a_bot_may_return_continuous_actions(tmp_path: Path) -> None:
    script = tmp_path / "drift.py"
    script.write_text("import numpy as np\n"
                      "def act(obs, mask):\n"
                      "    return [0.5] if obs[0] >= 0 else np.array([np.nan])\n")
    bot = load_bot(str(script))
    actions = bot.act_batch([np.zeros(3), np.ones(3)], None)
    assert actions.dtype == np.float32 and actions.tolist() == [[0.5], [0.5]]
    with pytest.raises(ScriptError, match=r"bot drift: act\(\) returned array\(\[nan\]\).*"
                       r"finite numbers for a continuous"):
        bot.act_batch([-np.ones(3)], None)
    ragged = tmp_path / "ragged.py"
    ragged.write_text("def act(obs, mask):\n    return [0.5] * int(obs[0])\n")
    with pytest.raises(ScriptError, match=r"bot ragged: act\(\) returned actions of different "
                       r"shapes \[\(1,\), \(2,\)\]"):
        load_bot(str(ragged)).act_batch([np.ones(3), 2 * np.ones(3)], None)
