"""User scripts that miss a function or return the wrong object get a ScriptError naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from msagent.errors import ConfigError, ScriptError, UserError
from msagent.policy import Policy
from msagent.user_scripts import build_policy, script_function

ENV = "import gymnasium as gym\n\ndef make_env(**kw):\n    return gym.make('CartPole-v1')\n"
AGENT = ("from msagent.policy import Policy\n\n"
         "def make_policy(observation_space, action_space, seed=None):\n"
         "    return Policy(observation_space, action_space, seed=seed)\n")


def _script(folder: Path, name: str, text: str) -> str:
    """Write a user script and return its path as the config gives it."""
    path = folder / name
    path.write_text(text)
    return str(path)


def test_working_scripts_build_a_policy(tmp_path: Path) -> None:
    policy = build_policy(_script(tmp_path, "env.py", ENV), _script(tmp_path, "a.py", AGENT), {})
    assert isinstance(policy, Policy) and policy.obs_shape == (4,)


def test_missing_function_is_a_script_error(tmp_path: Path) -> None:
    path = _script(tmp_path, "empty.py", "x = 1\n")
    with pytest.raises(ScriptError) as info:
        script_function(path, "make_env")
    assert str(info.value) == (f"user script {path!r} must define a function make_env(); see "
                               "the README section 'Your environment and your agent'")
    assert isinstance(info.value, UserError) and not isinstance(info.value, ConfigError)


def test_make_policy_returning_a_dict_names_the_type_and_script(tmp_path: Path) -> None:
    agent = _script(tmp_path, "agent.py", "def make_policy(o, a, seed=None):\n    return {}\n")
    with pytest.raises(ScriptError) as info:
        build_policy(_script(tmp_path, "env.py", ENV), agent, {})
    assert str(info.value) == (f"make_policy() in {agent} returned dict; it must return an "
                               "msagent.policy.Policy")


def test_make_policy_returning_a_module_of_its_own_names_the_class(tmp_path: Path) -> None:
    agent = _script(tmp_path, "agent.py", "import torch\n\ndef make_policy(o, a, seed=None):\n"
                                          "    return torch.nn.Linear(4, 2)\n")
    with pytest.raises(ScriptError, match=r"returned torch\.nn\.modules\.linear\.Linear; it"):
        build_policy(_script(tmp_path, "env.py", ENV), agent, {})


def test_make_env_returning_none_names_the_missing_attribute(tmp_path: Path) -> None:
    env = _script(tmp_path, "env.py", "def make_env(**kw):\n    return None\n")
    with pytest.raises(ScriptError) as info:
        build_policy(env, _script(tmp_path, "a.py", AGENT), {})
    assert str(info.value) == (
        f"make_env() in {env} returned None, which has no observation_space; it must return "
        "a gymnasium.Env (or an object with observation_space, action_space, reset, step)")


def test_make_env_without_step_names_step(tmp_path: Path) -> None:
    text = ("import gymnasium as gym\n\nclass Half:\n"
            "    observation_space = gym.spaces.Box(-1, 1, (4,))\n"
            "    action_space = gym.spaces.Discrete(2)\n"
            "    def reset(self, seed=None):\n        return None, {}\n\n"
            "def make_env(**kw):\n    return Half()\n")
    env = _script(tmp_path, "env.py", text)
    with pytest.raises(ScriptError, match=r"returned Half, which has no step; it must return"):
        build_policy(env, _script(tmp_path, "a.py", AGENT), {})


def test_a_privileged_env_needs_an_actor_that_reads_its_own_part_only() -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "openspiel"
    env, params = str(examples / "openspiel_env.py"), {"game": "kuhn_poker", "privileged": True}
    with pytest.raises(ScriptError, match=r"actor reads all.*actor_inputs=11"):
        build_policy(env, str(examples / "openspiel_agent.py"), params)
    policy = build_policy(env, str(examples / "openspiel_privileged_agent.py"), params)
    assert policy.obs_shape == (22,) and policy.network.actor_inputs == 11
