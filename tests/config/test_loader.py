"""load_config errors, --set overrides, script paths and the dump -> load round trip."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from msagent.config import dump_config, load_config, parse_value
from msagent.errors import ConfigError
from tests.config.helpers import MINIMAL


def test_unknown_key_names_dotted_key_file_and_known_keys(write_config) -> None:
    path = write_config(MINIMAL + "[services.env_worker]\nnum_env = 4\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert str(path) in message
    assert "services.env_worker.num_env: unknown key" in message
    assert "did you mean 'num_envs'?" in message


def test_unknown_table_is_an_error(write_config) -> None:
    with pytest.raises(ConfigError, match=r"  servics: unknown key; expected one of \["):
        load_config(write_config(MINIMAL + "[servics.learner]\nnum = 1\n"))


def test_wrong_type_names_key_expected_and_got(write_config) -> None:
    path = write_config(MINIMAL + '[services.env_worker]\nnum_envs = "many"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert "services.env_worker.num_envs: expected a valid integer, got 'many' (str)" in str(
        info.value
    )
    assert str(path) in str(info.value)


def test_all_bad_keys_are_reported_at_once(write_config) -> None:
    text = MINIMAL + "[run]\nseed = -1\n[logging]\nprogress = 1\n"
    with pytest.raises(ConfigError) as info:
        load_config(write_config(text))
    assert "run.seed:" in str(info.value) and "logging.progress:" in str(info.value)


def test_missing_scripts_table_is_reported(write_config) -> None:
    with pytest.raises(ConfigError, match=r"scripts: required key is missing"):
        load_config(write_config("[run]\nseed = 1\n"))


def test_missing_file_and_syntax_error_name_the_file(write_config, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config file not found: .*nope\.toml"):
        load_config(tmp_path / "nope.toml")
    bad = write_config("[run\nseed = 1\n", name="bad.toml")
    with pytest.raises(ConfigError, match=r"bad\.toml: TOML syntax error"):
        load_config(bad)


def test_overrides_parse_toml_literals(write_config) -> None:
    cfg = load_config(
        write_config(MINIMAL),
        ["services.env_worker.num_envs=8", "algorithm.lr=0.5", "services.learner.sync=false",
         'run.name="exp1"', "env.id=CartPole-v1", "env.sizes=[1, 2]"],
    )
    assert cfg.services.env_worker.num_envs == 8 and cfg.algorithm.lr == 0.5
    assert cfg.services.learner.sync is False and cfg.run.name == "exp1"
    assert cfg.env == {"id": "CartPole-v1", "sizes": [1, 2]}


def test_override_wins_over_file_value(write_config) -> None:
    path = write_config(MINIMAL + "[run]\nseed = 1\n")
    assert load_config(path, ["run.seed=5"]).run.seed == 5


def test_parse_value_falls_back_to_plain_string() -> None:
    assert parse_value("3") == 3 and parse_value("0.5") == 0.5 and parse_value("true") is True
    assert parse_value('"text"') == "text" and parse_value("[1,2]") == [1, 2]
    assert parse_value("redis://h:1/0") == "redis://h:1/0" and parse_value("") == ""


@pytest.mark.parametrize("bad", ["run.seed", "=3", "run..seed=3", "run seed=3"])
def test_bad_override_syntax_is_a_clear_error(write_config, bad: str) -> None:
    path = write_config(MINIMAL)
    with pytest.raises(ConfigError, match=r"bad --set .*expected KEY=VALUE") as info:
        load_config(path, [bad])
    assert str(path) in str(info.value)


def test_override_through_a_value_is_an_error(write_config) -> None:
    with pytest.raises(ConfigError, match=r"cannot --set run\.seed\.x: run\.seed is a value"):
        load_config(write_config(MINIMAL + "[run]\nseed = 1\n"), ["run.seed.x=1"])


def test_bad_override_value_is_marked_as_from_set(write_config) -> None:
    with pytest.raises(ConfigError, match=r"env_worker\.num_envs \(from --set\): expected a valid"):
        load_config(write_config(MINIMAL), ["services.env_worker.num_envs=many"])


def test_scripts_resolve_relative_to_the_toml_file(write_config, monkeypatch, tmp_path) -> None:
    path = write_config(MINIMAL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg = load_config(path)
    assert cfg.scripts.env == str(tmp_path / "env.py")
    assert Path(cfg.scripts.agent).is_absolute() and Path(cfg.scripts.agent).is_file()


def test_scripts_in_a_subfolder_and_missing_script(write_config, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "e.py").write_text("")
    cfg = load_config(write_config('[scripts]\nenv = "sub/e.py"\nagent = "agent.py"\n'))
    assert cfg.scripts.env == str(tmp_path / "sub" / "e.py")
    with pytest.raises(ConfigError, match=r"scripts\.agent: script file not found: .*missing\.py"):
        load_config(write_config('[scripts]\nenv = "env.py"\nagent = "missing.py"\n'))


def test_dump_then_load_gives_an_equal_config(write_config, tmp_path: Path) -> None:
    text = MINIMAL + (
        '[env]\nid = "CartPole-v1"\nnested = { a = [1, 2] }\n'
        "[services.env_worker]\nresources = { num_cpus = 0.5 }\n"
        '[algorithm]\nlr = 0.003\ntarget_kl = "none"\n'
    )
    cfg = load_config(write_config(text), ["run.seed=4"])
    dumped = dump_config(cfg)
    again = load_config(write_config(dumped, name="sub_dumped.toml"))
    assert again == cfg
    assert again.ppo_config() == cfg.ppo_config() and again.algorithm.model_fields_set == {
        "lr", "target_kl"}
    assert "gamma" not in tomllib.loads(dumped)["algorithm"]  # PPOConfig keeps its defaults


def test_dump_then_load_keeps_league_players_with_and_without_optional_keys(write_config) -> None:
    text = MINIMAL + (
        '[[league.players]]\nid = "main"\nseat_weights = [1, 2]\n'
        '[[league.players]]\nid = "me"\nrole = "main_exploiter"\n'
    )
    cfg = load_config(write_config(text))
    again = load_config(write_config(dump_config(cfg), name="sub_dumped.toml"))
    assert again == cfg
    assert [p.seat_weights for p in again.league.players] == [[1.0, 2.0], None]
