"""A run's plan, built from the config without launching anything: a single-policy run is a
league of one (one learner, no league service); a league has a learner and a table per player,
and every table an env worker ships to is one the buffer holds."""

from __future__ import annotations

import json
from pathlib import Path

from msagent.config import load_config
from msagent.runtime import slot
from msagent.services.league import LeagueService
from msagent.train.run_services import RunInfo
from msagent.train.wiring import plan_run
from tests.train.league_helpers import league_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def buffer_tables(plan) -> list[str]:
    """The names of the tables the plan's buffer is built with."""
    return [table.name for table in plan.buffer.args[0]]


def test_a_single_policy_run_is_a_league_of_one_without_a_league_service(tmp_path: Path) -> None:
    cfg = load_config(EXAMPLES / "cartpole_ppo.toml", [
        f"run.root={json.dumps(str(tmp_path))}", "services.env_worker.num=3",
        "services.env_worker.num_envs=4"])
    plan = plan_run(cfg, RunInfo())
    assert slot.get() is None, "planning launched a backend"
    assert list(plan.learners) == ["main"] and plan.league is None
    assert plan.workers.num == 3
    worker = plan.workers.args[0]
    assert buffer_tables(plan) == [worker.table]
    assert plan.batches == {"main": 12}  # one fragment per env slot (CartPole has one seat)
    assert plan.learners["main"].args[0].table == worker.table


def test_a_league_plan_has_a_learner_and_a_table_per_player(tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "services.env_worker.num=2")
    players = cfg.league.player_ids()
    plan = plan_run(cfg, RunInfo())
    assert slot.get() is None, "planning launched a backend"
    assert set(plan.learners) == set(players) and plan.league.cls is LeagueService
    assert {spec.name for spec in plan.learners.values()} == {f"Learner-{p}" for p in players}
    seats = plan.workers.args[0].league
    assert sorted(seats.tables.values()) == sorted(buffer_tables(plan))
    assert {p: plan.learners[p].args[0].table for p in players} == seats.tables
    assert set(plan.batches) == set(players) and min(plan.batches.values()) >= 1
    assert plan.evaluator is not None  # the example measures main against its bots


def test_a_mixed_run_plans_store_readers_beside_env_workers(tmp_path: Path) -> None:
    cfg = load_config(EXAMPLES / "cartpole_ppo.toml", [
        f"run.root={json.dumps(str(tmp_path))}", "services.env_worker.num=2",
        "services.env_worker.num_envs=4", 'data.source="mixed"', 'data.store="exp"',
        'data.game="cartpole"', "data.readers=2", "data.streams=3",
        'algorithm.name="impala"'])
    plan = plan_run(cfg, RunInfo())
    assert plan.mixed and plan.readers.num == 2 and plan.workers.num == 2
    assert plan.batches == {"main": 2 * 4 + 2 * 3}  # each feeder's fragments of one round
    assert plan.readers.args[0].table == plan.workers.args[0].table == buffer_tables(plan)[0]


def test_every_league_player_s_learner_gets_the_user_algorithm(tmp_path: Path) -> None:
    cfg = load_config(EXAMPLES / "kuhn_league.toml", [
        f"run.root={json.dumps(str(tmp_path))}", 'algorithm.script="algorithms/kl_pg.py"',
        "algorithm.settings.kl_coef=0.2"])
    plan = plan_run(cfg, RunInfo())
    for spec in plan.learners.values():
        settings = spec.args[0]
        assert settings.algorithm_script.endswith("examples/algorithms/kl_pg.py")
        assert settings.algorithm_settings == {"kl_coef": 0.2}


def test_each_league_player_learns_with_its_own_algorithm_keys(tmp_path: Path) -> None:
    """A player's ``algorithm`` keys override the run's; one that names another algorithm
    starts from that one's defaults; players without any keep the run's table."""
    players = ('league.players=[{id="main", role="main"}, '
               '{id="main_exploiter", role="main_exploiter", algorithm={lr=0.0001}}, '
               '{id="league_exploiter", role="league_exploiter", '
               'algorithm={script="algorithms/kl_pg.py", settings={kl_coef=0.3}}}]')
    cfg = load_config(EXAMPLES / "kuhn_league.toml", [
        f"run.root={json.dumps(str(tmp_path))}", "algorithm.lr=0.002", "algorithm.epochs=2",
        players])
    settings = {p: spec.args[0] for p, spec in plan_run(cfg, RunInfo()).learners.items()}
    main, exploiter, league = (settings[p] for p in ("main", "main_exploiter",
                                                     "league_exploiter"))
    assert (main.algorithm, main.ppo.lr, main.ppo.epochs) == ("ppo", 0.002, 2)
    assert (exploiter.algorithm, exploiter.ppo.lr, exploiter.ppo.epochs) == ("ppo", 0.0001, 2)
    assert main.algorithm_script is exploiter.algorithm_script is None
    assert league.algorithm_script.endswith("examples/algorithms/kl_pg.py")
    assert league.algorithm_settings == {"kl_coef": 0.3}
    # the saved config names the same script from anywhere (its path made absolute)
    saved = cfg.to_toml_dict()["league"]["players"][2]["algorithm"]
    assert Path(saved["script"]).is_absolute() and saved["settings"] == {"kl_coef": 0.3}


def test_a_player_s_own_learner_and_buffer_keys_shape_its_table_and_updates(
        tmp_path: Path) -> None:
    """A replaying player (as DQN wants): its table samples uniformly and rate-limits its
    inserts, its learner keeps old fragments and draws its own batch; the others keep the
    run's FIFO queues, lag and one batch size."""
    players = ('league.players=[{id="main", role="main"}, '
               '{id="main_exploiter", role="main_exploiter", '
               'learner={max_policy_lag=1000000, batch_fragments=8}, '
               'buffer={sampler="uniform", max_size=1600, max_times_sampled=8, '
               'samples_per_insert=4}}, '
               '{id="league_exploiter", role="league_exploiter"}]')
    cfg = league_config(tmp_path, "local", players)
    plan = plan_run(cfg, RunInfo())
    tables = {t.name.rsplit("/", 1)[1]: t for t in plan.buffer.args[0]}
    assert tables["main_exploiter"].sampler == "uniform"
    assert tables["main_exploiter"].max_times_sampled == 8
    assert tables["main"].sampler == tables["league_exploiter"].sampler == "fifo"
    learners = {p: spec.args[0] for p, spec in plan.learners.items()}
    assert learners["main_exploiter"].max_policy_lag == 1000000
    assert learners["main"].max_policy_lag == learners["league_exploiter"].max_policy_lag == 20
    assert learners["main_exploiter"].batch_fragments == 8
    assert learners["main"].batch_fragments == learners["league_exploiter"].batch_fragments
    worker = plan.workers.args[0]
    assert worker.rate_limited == (worker.league.tables["main_exploiter"],)
