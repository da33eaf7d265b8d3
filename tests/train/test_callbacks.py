"""Your own hooks (``[callbacks] script``): checked before a run starts, run where their data
is, their scalars in TensorBoard, the dashboard's feed and the progress line; a failing hook
is reported by name and the run goes on, or stops when the settings say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from msagent.callbacks import (
    CallbackError,
    CallbackSettings,
    HookRunner,
    MatchEvent,
    UpdateEvent,
    hook_functions,
)
from msagent.config import load_config
from msagent.errors import ConfigError, ScriptError
from msagent.vocabulary import BUILTIN_RANDOM
from tests.train.helpers import feed_state

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HOOKS = EXAMPLES / "hooks" / "league_hooks.py"


def _script(tmp_path: Path, source: str, name: str = "hooks.py") -> str:
    """A hooks script in ``tmp_path``; its path."""
    path = tmp_path / name
    path.write_text(source)
    return str(path)


def test_a_broken_hooks_script_is_refused_naming_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"defines on_updates, which is no hook; the hooks "
                                          r"are on_update, on_snapshot"):
        hook_functions(_script(tmp_path, "def on_updates(event):\n    pass\n", "typo.py"))
    with pytest.raises(ScriptError, match="defines none of the hooks on_update"):
        hook_functions(_script(tmp_path, "def update(event):\n    pass\n", "none.py"))
    with pytest.raises(ScriptError, match=r"on_checkpoint\(event\) in callbacks script .* "
                                          "must take one argument"):
        hook_functions(_script(tmp_path, "def on_checkpoint(step, path):\n    pass\n", "two.py"))
    with pytest.raises(ScriptError, match="on_snapshot in callbacks script .* must be a function"):
        hook_functions(_script(tmp_path, "on_snapshot = 3\n", "value.py"))


def test_the_config_resolves_the_script_and_refuses_a_missing_or_broken_one(
        tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "mine.py").write_text(HOOKS.read_text())
    _script(tmp_path / "hooks", "def on_match(event):\n    pass\n", "typo.py")

    def toml(script: str) -> Path:
        path = tmp_path / "run.toml"
        path.write_text(f'[scripts]\nenv = "{EXAMPLES / "cartpole" / "cartpole_env.py"}"\n'
                        f'agent = "{EXAMPLES / "cartpole" / "cartpole_agent.py"}"\n'
                        f'[callbacks]\nscript = "{script}"\non_error = "stop"\n')
        return path

    cfg = load_config(toml("hooks/mine.py"))
    assert cfg.callbacks.settings() == CallbackSettings(str(tmp_path / "hooks" / "mine.py"),
                                                        "stop")
    with pytest.raises(ConfigError, match="hooks/absent.py"):
        load_config(toml("hooks/absent.py"))
    with pytest.raises(ScriptError, match="defines on_match, which is no hook"):
        load_config(toml("hooks/typo.py"))
    assert load_config(toml("hooks/mine.py").with_name("run.toml")).callbacks.script


def test_a_failing_hook_is_kept_by_name_and_the_others_still_log(tmp_path: Path) -> None:
    script = _script(tmp_path, "def on_update(event):\n"
                               "    event.log('loss_x2', 2 * event.stats['loss'])\n"
                               "def on_match_result(event):\n"
                               "    event.log('length', event.length)\n"
                               "    raise KeyError('no such seat')\n")
    runner = HookRunner(CallbackSettings(script))
    runner.fire("on_update", UpdateEvent("main", 1, 1, {"loss": 0.25}))
    runner.fire("on_snapshot", UpdateEvent())  # not defined: nothing happens
    runner.fire("on_match_result", MatchEvent(["main", "main:1"], [1.0, -1.0], 7))
    drained = runner.drain()
    assert drained["scalars"] == {"loss_x2": 0.5, "length": 7.0}  # logged before it raised
    assert drained["errors"] == [f"callback on_match_result in {script} failed: "
                                 "KeyError: 'no such seat'"]
    assert drained["stop"] is False  # on_error = "continue"
    assert runner.drain()["errors"] == []  # each failure is reported once
    stopping = HookRunner(CallbackSettings(script, on_error="stop"))
    stopping.fire("on_match_result", MatchEvent([], [], 1))
    assert stopping.drain()["stop"] is True


def test_a_scalar_must_be_a_named_finite_number() -> None:
    event = UpdateEvent()
    with pytest.raises(ValueError, match="scalar 'x' is nan: only finite numbers"):
        event.log("x", float("nan"))
    with pytest.raises(ValueError, match="non-empty string"):
        event.log("", 1.0)


def _league_toml(tmp_path: Path, script: str, on_error: str = "continue") -> Path:
    """A two-player tic-tac-toe league with the random bot, an evaluator and the hooks."""
    toml = tmp_path / "league.toml"
    toml.write_text(f'''[scripts]
env = "{EXAMPLES / 'tictactoe' / 'tictactoe_env.py'}"
agent = "{EXAMPLES / 'tictactoe' / 'tictactoe_agent.py'}"
[services.env_worker]
num = 1
num_envs = 8
fragment_len = 16
[services.evaluator]
num_envs = 4
pause_s = 0.0
[callbacks]
script = "{script}"
on_error = "{on_error}"
progress = ["game_length"]
[league.bots]
random = "{BUILTIN_RANDOM}"
[league.roles.main]
snapshot_every_updates = 2
[[league.players]]
id = "main"
role = "main"
[[league.players]]
id = "main_exploiter"
role = "main_exploiter"
''')
    return toml


def _overrides(tmp_path: Path, mode: str, time_s: float) -> list[str]:
    """A short run of ``mode`` writing into ``tmp_path / runs``."""
    return [f"run.root={json.dumps(str(tmp_path / 'runs'))}", f'run.mode="{mode}"',
            f"run.stop.time_s={time_s}", "services.learner.checkpoint_every_s=4",
            "logging.log_every_s=1"]


@pytest.mark.slow
def test_a_league_s_hooks_log_into_tensorboard_feed_and_progress_and_a_failure_goes_on(
        inline_only: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from msagent.rundir import RunDir
    from msagent.train import run_training

    script = _script(tmp_path, f"exec(open({str(HOOKS)!r}).read())\n"
                               "_counted = on_checkpoint\n"
                               "def on_checkpoint(event):\n"
                               "    _counted(event)\n"
                               "    raise ValueError('a failing hook')\n")
    cfg = load_config(_league_toml(tmp_path, script), _overrides(tmp_path, "local", 20))
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result = run_training(cfg, run_dir)
    user = result["user"]
    assert {"main/entropy", "main_exploiter/entropy", "game_length", "first_seat_wins",
            "main/league_snapshots", "eval/bot:random", "checkpoint"} <= set(user), user
    assert 5 <= user["game_length"] <= 9  # a tic-tac-toe game: 5 to 9 moves
    assert 0.0 <= user["first_seat_wins"] <= 1.0 and user["main/entropy"] > 0
    # every checkpoint's hook failed (the final one's too): reported, counted, the run went on
    assert user["checkpoint"] == result["checkpoint"] and result["callback_errors"] >= 2
    events = EventAccumulator(str(run_dir.tensorboard_dir))
    events.Reload()
    assert {"user/game_length", "user/main/entropy", "user/eval/bot:random"} <= set(
        events.Tags()["scalars"])
    feed = json.loads((run_dir.path / "feed" / "state.json").read_text())
    assert feed["progress"]["user"]["game_length"] == user["game_length"]
    out = capsys.readouterr().out
    assert f"callback on_checkpoint in {script} failed: ValueError: a failing hook" in out
    lines = [ln for ln in out.splitlines() if ln.startswith("steps=")]
    assert lines and "user/game_length=" in lines[-1] and "user/first_seat_wins" not in lines[-1]


@pytest.mark.slow
def test_a_failing_hook_in_a_ray_league_stops_the_run_naming_it_as_set(
        request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """In Ray each hook runs in its own service's process: a failure in the league service
    reaches the driver, which stops the run with ``on_error = "stop"``; the learners' and the
    league's scalars reached the dashboard's feed before it."""
    from msagent.rundir import RunDir
    from msagent.train import run_training

    request.getfixturevalue("ray_only")
    script = _script(tmp_path, f"exec(open({str(HOOKS)!r}).read())\n"
                               "_games = {'n': 0}\n"
                               "_logged = on_match_result\n"
                               "def on_match_result(event):\n"
                               "    _logged(event)\n"
                               "    _games['n'] += 1\n"
                               "    if _games['n'] == 1000:\n"
                               "        raise RuntimeError('the 1000th game')\n")
    cfg = load_config(_league_toml(tmp_path, script, on_error="stop"),  # no evaluator needed
                      [*_overrides(tmp_path, "ray", 120), "services.evaluator.num=0"])
    with pytest.raises(CallbackError, match=r"callback on_match_result in .*hooks\.py failed: "
                                            r"RuntimeError: the 1000th game \(\[callbacks\] "
                                            r"on_error = \"stop\"\)"):
        run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    run = RunDir.open(next((tmp_path / "runs").iterdir()))
    log_text = run.log_path.read_text()
    assert "callback on_match_result" in log_text and "the 1000th game" in log_text
    assert run.checkpoint_steps(), "the learners lived: a final checkpoint was written"
    user = feed_state(run)["progress"]["user"]  # before it: the learners' and the league's
    assert {"main/entropy", "main_exploiter/entropy", "game_length"} <= set(user), user
