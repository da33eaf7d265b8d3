"""The [league] TOML table: parsing into settings and clear validation errors."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
from pydantic import ValidationError

from msagent.config.league import LeagueSection
from msagent.config.messages import describe
from msagent.league import League, LeagueSettings

EXAMPLE = """
[league]
payoff_decay = 0.98
min_games = 12
elo_k = 24
[[league.players]]
id = "main"
role = "main"
seat_weights = [1, 2]
[[league.players]]
id = "main_exploiter"
role = "main_exploiter"
count = 2
[[league.players]]
id = "league_exploiter"
role = "league_exploiter"
[league.roles.main]
self_play = 0.4
pfsp = 0.4
exploiters = 0.2
pfsp_weighting = "variance"
snapshot_every_updates = 30
snapshot_win_rate = 0.8
[league.roles.league_exploiter]
reset_prob = 0.5
[league.bots]
random = "connect4/bots/random_bot.py"
"""


def _errors(data: dict[str, Any]) -> str:
    """The config loader's message for invalid ``[league]`` data."""
    with pytest.raises(ValidationError) as info:
        LeagueSection.model_validate(data)
    return describe(info.value, LeagueSection, "train.toml")


def test_the_example_table_maps_onto_settings() -> None:
    settings = LeagueSection.model_validate(tomllib.loads(EXAMPLE)["league"]).to_settings()
    assert [(p.id, p.role) for p in settings.players] == [
        ("main", "main"), ("main_exploiter_0", "main_exploiter"),
        ("main_exploiter_1", "main_exploiter"), ("league_exploiter", "league_exploiter")]
    assert [p.seat_weights for p in settings.players] == [(1.0, 2.0), None, None, None]
    assert (settings.payoff_decay, settings.min_games, settings.elo_k) == (0.98, 12, 24)
    main = settings.main
    assert (main.self_play, main.pfsp, main.exploiters, main.pfsp_weighting) == (
        0.4, 0.4, 0.2, "variance")
    assert (main.snapshot_every_updates, main.snapshot_win_rate) == (30, 0.8)
    assert settings.league_exploiter.reset_prob == 0.5
    assert settings.main_exploiter.pfsp_weighting == "variance"  # the role's default
    assert settings.bots == {"random": "connect4/bots/random_bot.py"}
    assert League(settings).trainable()[1] == "main_exploiter_0"


def test_defaults_agree_with_the_settings_dataclasses() -> None:
    assert LeagueSection().to_settings() == LeagueSettings()


def test_unknown_role_lists_the_known_ones() -> None:
    text = _errors({"players": [{"id": "main"}, {"id": "x", "role": "boss"}]})
    assert "players[1].role: unknown role 'boss'; expected one of ['main', 'main_exploiter', " \
           "'league_exploiter']" in text


def test_duplicate_ids_are_named_also_after_count_expansion() -> None:
    assert "duplicate player ids ['a']" in _errors({"players": [{"id": "a"}, {"id": "a"}]})
    text = _errors({"players": [{"id": "a", "count": 2}, {"id": "a_1", "role": "main"}]})
    assert "duplicate player ids ['a_1']" in text


def test_a_main_agent_is_required() -> None:
    text = _errors({"players": [{"id": "x", "role": "league_exploiter"}]})
    assert "needs at least one player with role = 'main'" in text


@pytest.mark.parametrize(("data", "key", "message"), [
    ({"players": [{"id": "m", "count": 0}]}, "players[0].count", "greater than or equal to 1"),
    ({"roles": {"league_exploiter": {"reset_prob": 1.5}}}, "roles.league_exploiter.reset_prob",
     "less than or equal to 1"),
    ({"roles": {"main": {"snapshot_win_rate": -0.1}}}, "roles.main.snapshot_win_rate",
     "greater than or equal to 0"),
    ({"roles": {"main": {"pfsp": -1.0}}}, "roles.main.pfsp", "greater than or equal to 0"),
    ({"roles": {"main": {"self_play": 0, "pfsp": 0, "exploiters": 0}}}, "roles.main",
     "self_play + pfsp + exploiters + bots must be > 0"),
    ({"roles": {"main": {"bots": 0.2}}}, "roles.main", "bots = 0.2 needs bot_opponents"),
    ({"roles": {"main": {"bots": 0.2, "bot_opponents": ["greedy"]}},
      "bots": {"random": "r.py"}}, "(top level)",
     "bot_opponents ['greedy'] are not in [league.bots] (declared: ['random'])"),
    ({"roles": {"main": {"pfsp_weighting": "harsh"}}}, "roles.main.pfsp_weighting",
     "unknown PFSP weighting 'harsh'"),
    ({"roles": {"boss": {}}}, "roles.boss", "expected one of ['league_exploiter', 'main',"),
    ({"min_games": 0}, "min_games", "greater than or equal to 1"),
    ({"payoff_decay": 0.5}, "(top level)",
     "min_games = 10 is never reached with payoff_decay = 0.5"),
    ({"players": [{"id": "main:3"}]}, "players[0].id", "no ':'"),
    ({"players": [{"id": "m", "seat_weights": [0, 0]}]}, "players[0].seat_weights", "not all 0"),
    ({"players": [{"id": "m", "seat_weights": [1, -1]}]}, "players[0].seat_weights",
     "greater than or equal to 0"),
    ({"players": [{"id": "m", "seat_weights": [1]}]}, "players[0].seat_weights",
     "one weight per seat"),
    ({"bots": {"bot:x": "x.py"}}, "bots", "no ':'"),
])
def test_bad_values_name_the_key_and_the_rule(data: dict[str, Any], key: str, message: str) -> None:
    text = _errors(data)
    line = next(line for line in text.splitlines() if line.strip().startswith(key + ":"))
    assert message in line


def test_seat_weights_for_another_seat_count_are_refused_before_the_run() -> None:
    from msagent.errors import ConfigError
    from msagent.train.league_plan import check_seat_weights

    section = LeagueSection.model_validate(tomllib.loads(EXAMPLE)["league"])
    check_seat_weights(section, 2)
    with pytest.raises(ConfigError, match="'main': seat_weights has 2 weights; this game has 3"):
        check_seat_weights(section, 3)
