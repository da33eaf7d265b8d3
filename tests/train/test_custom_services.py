"""The user's own services (``[services.custom.NAME]``): declared in the TOML, launched with
the run, reached by name from the env script, and, when one dies, replaced or named as its
table says."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from msagent.config import load_config
from msagent.errors import ConfigError, ServiceDiedError
from msagent.rundir import RunDir
from msagent.train import run_training
from msagent.train.run_services import RunInfo
from msagent.train.wiring import plan_run
from tests.services.helpers import wait_until
from tests.train.helpers import feed_state, replacement_back
from tests.train.test_faults import Background, handle_of, kill_when_training

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SERVICE = EXAMPLES / "curriculum" / "curriculum_service.py"


def curriculum_config(root: Path, *overrides: str):
    """``examples/cartpole_curriculum.toml``, quiet, writing under ``root``."""
    return load_config(EXAMPLES / "cartpole_curriculum.toml", [
        f"run.root={json.dumps(str(root))}", "logging.progress=false",
        "logging.tensorboard=false", *overrides])


def inline(value: object) -> str:
    """A TOML inline value (tables as ``{k = v}``)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {inline(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def custom_table(**keys: object) -> str:
    """A ``--set`` of ``services.custom.Curriculum`` as an inline table."""
    return f"services.custom.Curriculum={inline(keys)}"


def test_the_plan_launches_the_user_service_under_its_name(tmp_path: Path) -> None:
    plan = plan_run(curriculum_config(tmp_path), RunInfo())
    (spec,) = plan.custom.values()
    assert spec.name == "Curriculum" and spec.num == 1
    assert spec.args == ({"first": 1, "last": 5, "every": 40},)
    assert set(m for m in dir(spec.cls) if not m.startswith("_")) == {"next_level", "progress"}


@pytest.mark.parametrize("keys, error", [
    ({"script": str(SERVICE), "class": "Nope"}, r"must define a class Nope"),
    ({"script": str(SERVICE), "class": "Path"}, r"class Path in .* has no @register methods"),
    ({"script": "missing.py", "class": "Curriculum"}, r"script file not found"),
    ({"script": str(SERVICE), "class": "Curriculum", "num": 0}, r"greater than or equal to 1"),
])
def test_a_broken_service_table_is_refused_naming_it(tmp_path: Path, keys: dict,
                                                     error: str) -> None:
    with pytest.raises(ConfigError, match=r"services\.custom\.Curriculum.*: .*" + error):
        curriculum_config(tmp_path, custom_table(**keys))


def test_a_user_service_may_not_take_the_name_of_one_of_msagent_s(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'Learner' is the name of one of msagent's services"):
        curriculum_config(tmp_path, "services.custom.Learner={script = "
                          f"{json.dumps(str(SERVICE))}, class = \"Curriculum\"}}")


@pytest.mark.slow
def test_the_env_script_and_the_learner_reach_the_user_service(inline_only: str,
                                                                tmp_path: Path) -> None:
    """The env script asks for a level at every reset; the learner's ``on_update`` hook
    reads the curriculum's progress after every update."""
    log = tmp_path / "curriculum.json"
    hooks = tmp_path / "hooks.py"
    hooks.write_text("from msagent import Solver\n"
                     "def on_update(event):\n"
                     "    seen = Solver().retrieve('Curriculum', 'progress')\n"
                     "    event.log('curriculum_level', seen['level'])\n")
    cfg = curriculum_config(tmp_path, 'run.mode="local"', "run.stop.env_steps=20000",
                            custom_table(script=str(SERVICE), **{"class": "Curriculum"},
                                         settings={"every": 40, "log_path": str(log)}),
                            f"callbacks.script={json.dumps(str(hooks))}")
    result = run_training(cfg, RunDir.create(cfg.run.root, cfg.run.name))
    seen = json.loads(log.read_text())
    assert seen["requests"] >= result["episodes"]  # one per episode, and per env at its start
    assert seen["level"] == 5  # the level rose as the service said
    assert result["user"]["curriculum_level"] == 5, result["user"]  # as the learner saw it


@pytest.mark.slow
def test_a_killed_user_service_is_replaced_or_stops_the_run_as_its_table_says(
        ray_only: str, tmp_path: Path) -> None:
    """Two user services of one class (one run for both: a run takes long to start): the one
    that may restart is replaced when killed and the run goes on; killing the one that may
    not stops the run naming it."""
    archive = {"script": str(SERVICE), "class": "Curriculum", "restart": False}
    run = Background(tmp_path, custom_table(script=str(SERVICE), restart=True,
                                            **{"class": "Curriculum"}),
                     f"services.custom.Archive={inline(archive)}")
    kill_when_training("Curriculum", run)
    wait_until(lambda: replacement_back(run.run_dir) or not run.alive, timeout_s=90,
               what="the replacement")
    assert run.alive, run.error
    (replaced,) = feed_state(run.run_dir)["replacements"]
    assert replaced["dead"] == "Curriculum#0" and replaced["new"], replaced
    os.kill(handle_of("Archive").placements()[0]["pid"], signal.SIGKILL)
    run.join()
    assert isinstance(run.error, ServiceDiedError), run.error
    assert "service Archive died" in str(run.error)
    assert "service Archive died" in run.run_dir.log_path.read_text()


def test_only_a_non_restartable_user_service_s_death_ends_the_run() -> None:
    from msagent.train.run_services import Services

    keeps, restarts = object(), object()
    services = Services(object(), object(), {"main": object()}, None, object(),
                        custom={"Keeps": keeps, "Restarts": restarts},
                        restartable={"Restarts"})
    assert keeps in services.stateful() and restarts not in services.stateful()
    assert {keeps, restarts} <= set(services.all())  # both are stopped at the end
