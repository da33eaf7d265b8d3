"""A role of the user's own (``role = "roles.py:Class"``): the league asks it whom its player
plays and checks the answer; broken role scripts are refused with one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.errors import ConfigError, ScriptError
from msagent.league import League, PlayerSpec
from msagent.league.roles import make_role
from msagent.vocabulary import ModelKey, PolicyRef
from tests.league.helpers import settings

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WINDOW = f"{EXAMPLES / 'roles' / 'recent_window.py'}:RecentWindow"


def test_a_user_role_chooses_among_the_newest_snapshots_only() -> None:
    league = League(settings(players=(PlayerSpec("main", "main"), PlayerSpec("w", WINDOW))),
                    seed=0, clock=lambda: 0.0)
    assert [league.next_match("w").opponents() for _ in range(5)] == [
        (PolicyRef.player("w"),)] * 5  # no snapshot yet: itself
    for version in range(1, 6):
        league.add_snapshot("main", ModelKey("main", version), version)
    seen = {str(league.next_match("w").opponents()[0]) for _ in range(300)}
    assert seen == {"main:3", "main:4", "main:5"}
    assert league.on_update("w", 0).snapshot  # the base rule it left alone: a first snapshot


def _script(tmp_path: Path, source: str) -> str:
    """A role script in ``tmp_path``; its path."""
    path = tmp_path / "roles.py"
    path.write_text(source)
    return str(path)


def test_a_broken_role_script_is_refused_naming_what_is_wrong(tmp_path: Path) -> None:
    path = _script(tmp_path, "class NotARole:\n    pass\n")
    with pytest.raises(ScriptError, match=r"must define a class Missing that subclasses "
                                          r"msagent\.league\.Role; got nothing"):
        make_role(f"{path}:Missing", settings())
    with pytest.raises(ScriptError, match=r"class NotARole that subclasses .*got <class"):
        make_role(f"{path}:NotARole", settings())


def test_a_role_choosing_no_participant_is_refused_naming_the_role(tmp_path: Path) -> None:
    path = _script(tmp_path, "from msagent.league import Role\n"
                             "from msagent.vocabulary import PolicyRef\n"
                             "class Ghost(Role):\n"
                             "    def choose_opponent(self, view, player, rng):\n"
                             "        return PolicyRef.player('nobody')\n")
    league = League(settings(players=(PlayerSpec("g", f"{path}:Ghost"),)), clock=lambda: 0.0)
    with pytest.raises(ValueError, match=r"role '.*roles\.py:Ghost' chose the opponent "
                                         r".*nobody.*not a participant"):
        league.next_match("g")


def _league_toml(tmp_path: Path, role: str) -> Path:
    """The smallest league TOML whose second player takes ``role``."""
    toml = tmp_path / "league.toml"
    toml.write_text(f'''[scripts]
env = "{EXAMPLES / 'tictactoe' / 'tictactoe_env.py'}"
agent = "{EXAMPLES / 'tictactoe' / 'tictactoe_agent.py'}"
[[league.players]]
id = "main"
role = "main"
[[league.players]]
id = "window"
role = "{role}"
''')
    return toml


def test_the_config_resolves_the_role_script_and_refuses_a_broken_one(tmp_path: Path) -> None:
    (tmp_path / "roles").mkdir()
    (tmp_path / "roles" / "mine.py").write_text(
        (EXAMPLES / "roles" / "recent_window.py").read_text())
    cfg = load_config(_league_toml(tmp_path, "roles/mine.py:RecentWindow"))
    assert cfg.league.players[1].role == f"{tmp_path / 'roles' / 'mine.py'}:RecentWindow"
    with pytest.raises(ConfigError, match=r"unknown role 'mian'; expected one of .*"
                                          r"'path/to/roles\.py:ClassName'"):
        load_config(_league_toml(tmp_path, "mian"))
    with pytest.raises(ConfigError, match="roles/absent.py"):
        load_config(_league_toml(tmp_path, "roles/absent.py:RecentWindow"))
    with pytest.raises(ScriptError, match="must define a class Nope"):
        load_config(_league_toml(tmp_path, "roles/mine.py:Nope"))


@pytest.mark.slow
def test_a_league_with_a_user_role_trains_and_its_matches_follow_the_role(
        tmp_path: Path) -> None:
    from msagent.rundir import RunDir
    from msagent.train import run_training

    toml = _league_toml(tmp_path, "../../../examples/roles/recent_window.py:RecentWindow")
    toml.write_text(toml.read_text().replace(
        "../../../examples/roles/recent_window.py", str(EXAMPLES / "roles" / "recent_window.py")))
    cfg = load_config(toml, [f"run.root={json.dumps(str(tmp_path / 'runs'))}",
                             'run.mode="local"', "logging.progress=false",
                             "logging.tensorboard=false", "services.env_worker.num=1",
                             "services.evaluator.num=0", "run.stop.time_s=25",
                             "league.roles.main.snapshot_every_updates=2"])
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name), False)
    assert result["league"]["players"]["window"]["updates"] > 0, result["league"]
    run = RunDir.open(next((tmp_path / "runs").iterdir()))
    league = run.checkpoints.latest().state["league"]
    created = [(h["created_s"], h["ref"]) for h in league["historical"]]  # oldest first
    windows = [m for m in league["match_log"] if m["seats"][m["learner_seat"]] == "window"
               and m["seats"][1 - m["learner_seat"]] != "window"]
    assert len(created) > 8 and len(windows) > 20, (len(created), len(windows))

    def recent(match: dict) -> bool:
        """Whether the opponent was among the 6 newest snapshots when the game was reported
        (the 3 the role drew from, and up to 3 more made while the game went on)."""
        before = [ref for at, ref in created if at <= match["time"]]
        return match["seats"][1 - match["learner_seat"]] in before[-6:]

    # PFSP over every snapshot (the base rule) would draw old ones too
    assert sum(map(recent, windows)) >= 0.9 * len(windows), [m["seats"] for m in windows]
