"""MultiDiscrete actions trained end to end: one policy on a one-seat Gymnasium env with PPO,
and a league on a two-seat game with masks whose main agent beats the built-in random bot,
then is evaluated and exported to ONNX like any other."""

from __future__ import annotations

import pytest
from pathlib import Path

import numpy as np

from msagent.client.onnx_policy import OnnxPolicy
from msagent.config import dump_config
from msagent.evaluate import evaluate_run
from msagent.exporting.run_export import export_run
from msagent.rundir import RunDir
from msagent.train import run_training
from tests.envs.twin_target_game import TwinTarget
from tests.train.helpers import feed_state, one_seat_config, train_until
from tests.train.test_league_runs import smallest_league

TWIN = Path(__file__).resolve().parents[1] / "envs" / "twin_target_game.py"

PICK_TWO = '''
"""Show a colour (one of 3) and a size (one of 2) one-hot; 0.5 for each part answered right,
20 steps: random play earns 20 * (1/3 + 1/2) / 2 = 8.3 a game, a perfect policy 20."""
import gymnasium as gym
import numpy as np


class PickTwo(gym.Env):
    observation_space = gym.spaces.Box(0, 1, (5,), np.float32)
    action_space = gym.spaces.MultiDiscrete([3, 2])

    def _draw(self):
        self.target = (int(self.np_random.integers(3)), int(self.np_random.integers(2)))
        obs = np.zeros(5, np.float32)
        obs[self.target[0]] = obs[3 + self.target[1]] = 1.0
        return obs

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._draw(), {}

    def step(self, action):
        assert action.dtype == np.int64 and action.shape == (2,), action
        self.t += 1
        reward = 0.5 * (action[0] == self.target[0]) + 0.5 * (action[1] == self.target[1])
        return self._draw(), float(reward), False, self.t >= 20, {}


def make_env():
    return PickTwo()
'''


@pytest.mark.slow
def test_ppo_learns_both_parts_of_a_multi_discrete_action(tmp_path: Path) -> None:
    result = run_training(one_seat_config(tmp_path, PICK_TWO, 19), None, False)
    assert result["stop_reason"].startswith("mean_return"), result  # random play: 8.3
    assert result["env_errors"] == 0 and result["dropped_fragments"] == 0


def _beats_random(run_dir: RunDir) -> bool:
    """Whether main won 90 % of at least 40 evaluation games from each seat."""
    rows = [r for r in feed_state(run_dir).get("eval") or [] if r["opponent"] == "bot:random"]
    return (len(rows) == 2 and min(r["games"] for r in rows) >= 40
            and sum(r["wins"] for r in rows) >= 0.9 * sum(r["games"] for r in rows))


@pytest.mark.slow
def test_a_league_with_masked_multi_discrete_actions_beats_the_random_bot(
        inline_only: str, tmp_path: Path) -> None:
    """Random against random wins about 40 % (draws are common); main must answer both parts
    of its own target, inside the mask, to win 90 %."""
    cfg = smallest_league(tmp_path, TWIN.read_text(), "run.stop.time_s=150",
                          "services.env_worker.num_envs=8", "services.evaluator.num=1",
                          "services.evaluator.num_envs=8", "league.min_games=5",
                          'services.evaluator.opponents=["bot:random"]',
                          'league.bots.random="msagent:random"')
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    run_dir.write_config(dump_config(cfg))  # as msagent train does, for evaluate and export
    result = train_until(cfg, run_dir, lambda: _beats_random(run_dir), 150,
                         "main to win 90 % of 40 games from each seat against bot:random")
    assert result["env_errors"] == 0, result

    found = evaluate_run(run_dir.path, opponent="random", games=40, seed=1)
    assert min(row.win_rate for row in found.result.by_seat) >= 0.85, found.result

    export = export_run(run_dir.path)  # msagent export RUN_DIR OUT --format onnx
    assert export.info["action"] == {"nvec": [3, 2]} and export.parity <= 1e-4
    client = OnnxPolicy(export.onnx_bytes)
    game = TwinTarget()
    obs, infos = game.reset(seed=5)
    hits = 0
    for _ in range(8):
        masks = {a: infos[a]["action_mask"].astype(bool) for a in game.agents}
        acts = {a: client.act(obs[a], masks[a], greedy=True)[0] for a in game.agents}
        hits += sum(np.array_equal(acts[a], game.targets[a]) for a in game.agents)
        obs, _, _, _, infos = game.step(acts)
    assert hits >= 15, hits  # of 16 answers; random play hits about 5
