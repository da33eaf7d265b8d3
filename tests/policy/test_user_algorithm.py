"""A user's algorithm from ``[algorithm] script``: its settings validated by the script's own
``Settings`` when the config loads, and every broken script refused with one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from msagent.config import load_config
from msagent.errors import ConfigError, NonFiniteError, ScriptError
from msagent.policy import Policy
from msagent.policy.algorithms.user import make_user_algorithm
from msagent.vocabulary import Fragment, ModelKey

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KL_PG = EXAMPLES / "algorithms" / "kl_pg.py"


def config_with(tmp_path: Path, *overrides: str):
    """``examples/cartpole_kl_pg.toml`` with ``--set`` overrides."""
    return load_config(EXAMPLES / "cartpole_kl_pg.toml",
                       [f"run.root={json.dumps(str(tmp_path))}", *overrides])


def script(tmp_path: Path, text: str) -> str:
    """A user algorithm script in ``tmp_path``; its path."""
    path = tmp_path / "algo.py"
    path.write_text(text)
    return str(path)


def cartpole_policy() -> Policy:
    """A fresh CartPole policy."""
    env = gym.make("CartPole-v1")
    return Policy(env.observation_space, env.action_space, seed=0)


def fragments(n: int = 4, t: int = 8, reward: float = 1.0) -> list[Fragment]:
    """``n`` CartPole fragments of ``t`` random steps."""
    rng = np.random.default_rng(0)
    return [Fragment(obs=rng.normal(size=(t, 4)).astype(np.float32),
                     actions=rng.integers(0, 2, t), logp=np.full(t, -0.69, np.float32),
                     values=np.zeros(t, np.float32), rewards=np.full(t, reward, np.float32),
                     terminated=np.zeros(t, bool), truncated=np.zeros(t, bool),
                     final_values=np.zeros(t, np.float32), bootstrap_value=0.0,
                     policy=ModelKey("main", 0))
            for _ in range(n)]


def test_the_example_s_settings_are_validated_by_its_own_model(tmp_path: Path) -> None:
    cfg = config_with(tmp_path)
    assert cfg.algorithm.script == str(KL_PG.resolve())
    assert cfg.algorithm.settings["kl_coef"] == 0.05
    with pytest.raises(ConfigError, match=r"algorithm\.settings.*kl_coef: Input should be "
                                          r"greater than or equal to 0"):
        config_with(tmp_path, "algorithm.settings.kl_coef=-1.0")
    with pytest.raises(ConfigError, match=r"algorithm\.settings.*klcoef: Extra inputs"):
        config_with(tmp_path, "algorithm.settings.klcoef=1.0")


def test_built_in_keys_beside_a_script_and_settings_without_one_are_refused(
        tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"lr: with algorithm\.script, the algorithm's own "
                                          r"settings go in \[algorithm\.settings\]"):
        config_with(tmp_path, "algorithm.lr=0.1")
    with pytest.raises(ConfigError, match=r"\[algorithm\.settings\] is for a user algorithm"):
        load_config(EXAMPLES / "cartpole_ppo.toml", ["algorithm.settings.lr=0.1"])


def test_a_missing_script_or_make_algorithm_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError,
                       match=r"algorithm\.script \(from --set\): script file not found"):
        config_with(tmp_path, 'algorithm.script="nowhere.py"')
    empty = script(tmp_path, "x = 1\n")
    with pytest.raises(ConfigError, match=r"must define a function make_algorithm\(\)"):
        config_with(tmp_path, f"algorithm.script={json.dumps(empty)}", "algorithm.settings={}")


def test_a_dataclass_settings_names_unknown_keys(tmp_path: Path) -> None:
    path = script(tmp_path, "from dataclasses import dataclass\n@dataclass\nclass Settings:\n"
                  "    lr: float = 0.1\ndef make_algorithm(policy, config):\n    return None\n")
    with pytest.raises(ConfigError, match=r"epochs: not a setting of Settings in .*algo\.py "
                                          r"\(it has lr\)"):
        config_with(tmp_path, f"algorithm.script={json.dumps(path)}")


def test_make_algorithm_must_return_an_algorithm_training_the_given_policy(tmp_path) -> None:
    wrong = script(tmp_path, "def make_algorithm(policy, config):\n    return object()\n")
    with pytest.raises(ScriptError, match=r"must return an msagent Algorithm .* got object"):
        make_user_algorithm(wrong, {}, cartpole_policy())


def test_the_example_learns_refuses_nan_and_round_trips_its_state() -> None:
    policy = cartpole_policy()
    algo = make_user_algorithm(str(KL_PG), {"lr": 0.01}, policy)
    before = policy.get_weights()
    stats = algo.update(fragments())
    assert stats["losses/kl_to_reference"] >= 0.0 and algo.updates == 1
    assert any(not np.array_equal(before[k], v) for k, v in policy.get_weights().items())
    bad = fragments()
    bad[2].rewards[3] = np.nan
    kept = policy.get_weights()
    with pytest.raises(NonFiniteError, match=r"rewards\[fragment 2, step 3\] = nan"):
        algo.update(bad)
    assert all(np.array_equal(kept[k], v) for k, v in policy.get_weights().items())
    again = make_user_algorithm(str(KL_PG), {"lr": 0.01}, cartpole_policy())
    again.load_state_dict(algo.state_dict())
    assert again.updates == 1
    for mine, theirs in zip(algo.reference.parameters(), again.reference.parameters()):
        assert np.array_equal(mine.detach().numpy(), theirs.detach().numpy())
