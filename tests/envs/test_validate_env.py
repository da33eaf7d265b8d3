"""validate_env and ``msagent validate-env``: the examples pass, broken scripts fail clearly."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from msagent.cli import app
from msagent.validate_env import validate_env

ROOT = Path(__file__).resolve().parents[2] / "examples"
CONNECT4 = str(ROOT / "connect4" / "connect4_env.py")
runner = CliRunner()

OUT_OF_SPACE = '''
import gymnasium as gym
import numpy as np


class Drifting(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        self.t = 0
        return np.zeros(3, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.full(3, 0.5 * self.t, np.float32), 0.0, self.t >= 50, False, {}


def make_env():
    return Drifting()
'''


FLAT_OBSERVATIONS = '''
from pettingzoo.classic.connect_four.connect_four import raw_env


class Flat(raw_env):
    def observe(self, agent):
        obs = super().observe(agent)
        return {"observation": obs["observation"][:, :, 0], "action_mask": obs["action_mask"]}


def make_env():
    return Flat()
'''


def failed(report) -> dict[str, str]:
    """Check name -> message of every failed check."""
    return {c.name: c.message for c in report.checks if not c.passed}


def test_connect_four_example_passes_every_check() -> None:
    report = validate_env(CONNECT4, {}, steps=300)
    assert report.ok, report.render()
    names = [c.name for c in report.checks]
    assert "pettingzoo api_test" in names and "observations" in names
    assert report.seats == ("player_0", "player_1") and report.turns == 300
    assert report.games > 0 and 7 <= report.avg_length <= 42 and report.steps_per_s > 0


def test_openspiel_example_with_params_passes() -> None:
    report = validate_env(str(ROOT / "openspiel" / "openspiel_env.py"), {"game": "kuhn_poker"},
                          steps=100)
    assert report.ok and report.kind == "OpenSpielAdapter", report.render()


def test_observation_outside_the_space_fails_naming_it(tmp_path: Path) -> None:
    script = tmp_path / "drifting_env.py"
    script.write_text(OUT_OF_SPACE)
    report = validate_env(str(script), {}, steps=100)
    assert not report.ok and set(failed(report)) == {"observations"}
    message = failed(report)["observations"]
    assert "turn 3" in message and "seat agent_0" in message and "outside the bounds" in message


def test_missing_make_env_and_unplayable_returns_fail(tmp_path: Path) -> None:
    script = tmp_path / "empty_env.py"
    script.write_text("def build():\n    return None\n")
    report = validate_env(str(script), {})
    assert failed(report) == {"make_env": f"user script {str(script)!r} must define a function "
                              "make_env(); see the README section 'Your environment and your "
                              "agent'"}
    script = tmp_path / "int_env.py"  # a new path: scripts are imported once per process
    script.write_text("def make_env():\n    return 42\n")
    assert "returned int" in failed(validate_env(str(script), {}))["recognised env"]


def test_pettingzoo_api_test_failure_is_reported(tmp_path: Path) -> None:
    script = tmp_path / "bad_pz_env.py"
    script.write_text(FLAT_OBSERVATIONS)
    report = validate_env(str(script), {}, steps=50)
    problems = failed(report)
    assert problems["pettingzoo api_test"].startswith(
        "api_test failed with AssertionError: Out of bounds observation"), report.render()
    assert "expects shape (6, 7, 2) dtype int8, got shape (6, 7)" in problems["observations"]


def test_cli_exit_codes(tmp_path: Path) -> None:
    ok = runner.invoke(app, ["validate-env", CONNECT4, "--steps", "100"])
    assert ok.exit_code == 0, ok.output
    assert "[PASS] observations" in ok.output and "all checks passed" in ok.output
    script = tmp_path / "drifting_env.py"
    script.write_text(OUT_OF_SPACE)
    bad = runner.invoke(app, ["validate-env", str(script), "--steps", "100"])
    assert bad.exit_code == 2 and "[FAIL] observations" in bad.output
    params = runner.invoke(app, ["validate-env", str(ROOT / "openspiel" / "openspiel_env.py"),
                                 "--set", "game=matrix_rps", "--steps", "20"])
    assert params.exit_code == 0 and "'game': 'matrix_rps'" in params.output
    assert runner.invoke(app, ["validate-env", CONNECT4, "--set", "oops"]).exit_code == 2
    prefixed = runner.invoke(app, ["validate-env", str(ROOT / "openspiel" / "openspiel_env.py"),
                                   "--set", "env.game=matrix_rps", "--steps", "20"])
    assert prefixed.exit_code == 0 and "'game': 'matrix_rps'" in prefixed.output
    other = runner.invoke(app, ["validate-env", CONNECT4, "--set", "run.seed=3"])
    assert other.exit_code == 2 and "'run.seed'" in other.output


BAD_TEAMS = '''
from pettingzoo.classic import connect_four_v3
from msagent.envs.adapters import as_multi_agent


def make_env():
    game = as_multi_agent(connect_four_v3.env())
    game.teams = (0, 2)  # side 1 is empty
    return game
'''


def test_teams_are_checked_and_reported(tmp_path: Path) -> None:
    report = validate_env(CONNECT4, {}, steps=20)
    assert {c.name: c.message for c in report.checks}["teams"] == (
        "no teams: every seat is its own side")
    script = tmp_path / "bad_teams_env.py"
    script.write_text(BAD_TEAMS)
    assert "no side empty" in failed(validate_env(str(script), {}, steps=20))["teams"]


BAD_SCORE = '''
import dataclasses
import gymnasium as gym
import numpy as np
from msagent.envs.wrappers import Wrapper


class BadScore(Wrapper):
    def step(self, actions):
        turn = self.env.step(actions)
        return dataclasses.replace(turn, score=np.zeros(3))


def make_env():
    return BadScore(gym.make("CartPole-v1"))
'''


def test_a_score_of_the_wrong_shape_is_named(tmp_path: Path) -> None:
    script = tmp_path / "bad_score_env.py"
    script.write_text(BAD_SCORE)
    report = validate_env(str(script), {}, steps=20)
    assert not report.ok
    assert "score should have shape (1,), got (3,)" in " ".join(failed(report).values())


RPS = '''
from pettingzoo.classic import rps_v2

from msagent.envs.wrappers import Flatten


def make_env(flatten=False):
    game = rps_v2.parallel_env()
    return Flatten(game) if flatten else game
'''


def test_a_space_no_policy_takes_fails_naming_the_wrapper_that_fixes_it(tmp_path: Path) -> None:
    script = tmp_path / "rps_env.py"
    script.write_text(RPS)
    report = validate_env(str(script), {}, steps=50)
    assert set(failed(report)) == {"policy spaces"}, report.render()  # the game itself is fine
    message = failed(report)["policy spaces"]
    assert "Discrete(4)" in message and "msagent.envs.wrappers.Flatten(env)" in message
    fixed = validate_env(str(script), {"flatten": True}, steps=50)
    assert fixed.ok and fixed.observation_space.startswith("Box(0.0, 1.0, (4,)"), fixed.render()


def test_a_game_with_nothing_to_observe_or_a_failing_adapter_is_a_failed_check(
        tmp_path: Path) -> None:
    """OpenSpiel's coin_game implements no observation tensor (a SpielError traceback before);
    a Parallel env whose action_space raises while being adapted fails its check too."""
    report = validate_env(str(ROOT / "openspiel" / "openspiel_env.py"), {"game": "coin_game"})
    assert "coin_game implements neither an information-state tensor nor an observation " \
        "tensor" in failed(report)["recognised env"]
    script = tmp_path / "raising_env.py"
    script.write_text("from tests.envs.twin_target_game import TwinTarget\n\n\n"
                      "class Broken(TwinTarget):\n"
                      "    def action_space(self, agent):\n"
                      "        raise KeyError(agent)\n\n\n"
                      "def make_env():\n    return Broken()\n")
    assert failed(validate_env(str(script), {}))["recognised env"] == (
        "adapting the env raised KeyError: 'player_0'")
