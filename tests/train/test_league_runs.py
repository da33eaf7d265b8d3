"""League runs end to end on tic-tac-toe: the league grows, the main agent learns to beat a
bot it never trained against, and a resumed league is the league that was checkpointed; the
smallest league config on a game no example uses; and a Kuhn poker league trained until its
main agent's measured NashConv is low enough."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from msagent.config import TrainConfig, dump_config, load_config
from msagent.evaluate import evaluate_run
from msagent.exporting.run_export import export_run
from msagent.league_db import DATABASE_NAME
from msagent.model_pool.stores.spilling import SPILL_SUFFIX
from msagent.rundir import RunDir
from msagent.rundir.directory import SPILL_NAME
from msagent.rundir.learner_layout import player_part
from msagent.rundir.state_codec import unflatten_state
from msagent.runtime import state
from msagent.services.learner import LEAGUE_REQUIRED_KEYS
from msagent.train.final_evaluation import final_evaluation
from msagent.train.resume import plan_resume
from msagent.train.signals import STOP_FILE_REASON
from tests.train.helpers import feed_state, train_until
from tests.train.league_helpers import league_config

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ROLES = ("main", "main_exploiter", "league_exploiter")
"""The example league's players (each named after its role)."""


def eval_win_rate(result: dict, opponent: str) -> tuple[float, int]:
    """The main agent's win rate against ``opponent`` over both seats, and the games."""
    rows = [r for r in result["league"]["eval"] if r["opponent"] == opponent]
    games = sum(r["games"] for r in rows)
    return sum(r["wins"] for r in rows) / max(games, 1), games


@pytest.mark.slow
def test_a_seeded_league_grows_and_its_main_agent_beats_the_random_bot(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "run.stop.time_s=180",
                        "league.roles.main.snapshot_every_updates=5",
                        "league.roles.main_exploiter.snapshot_every_updates=5",
                        "league.roles.league_exploiter.snapshot_every_updates=5",
                        'services.evaluator.opponents=["bot:random"]',
                        "services.evaluator.judge_every_s=10",
                        'league.bots.random="msagent:random"')  # the built-in, not the script
    assert cfg.league.bots["random"] == "msagent:random"
    assert cfg.services.evaluator.judge.endswith("perfect_bot.py")  # the example's judge
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    # trains until the feed shows what is asserted below, with a margin (at most 180 s)
    result = train_until(cfg, run_dir, lambda: _beats_random(run_dir), 180,
                         "6 snapshots and 80% won of 100 evaluation games against bot:random")
    summary = result["league"]["summary"]
    assert summary["historical"] >= 6, summary  # every player snapshotted at least twice
    rate, games = eval_win_rate(result, "bot:random")
    # random against random wins ~44% over both seats (58% first, 29% second)
    assert games >= 100 and rate >= 0.75, (rate, games)
    with sqlite3.connect(run_dir.path / DATABASE_NAME) as db:  # every evaluation game kept
        kept = db.execute("select count(*), count(distinct seat) from evaluations where "
                          "player = 'main' and opponent = 'bot:random'").fetchone()
    assert kept[0] >= games and kept[1] == 2, kept
    assert "main" in result["league"]["ladder"]
    assert Path(result["league"]["heatmap"]).stat().st_size > 0
    # the perfect player judged main's moves on every position, from the untrained version on:
    # it throws value away in fewer of them as it learns
    exams = result["league"]["judged"]
    assert len(exams) >= 2 and exams[0]["version"] < exams[-1]["version"], exams
    first, last = ([e["seats"][s]["losing"] for s in (0, 1)] for e in (exams[0], exams[-1]))
    assert [exams[-1]["seats"][s]["positions"] for s in (0, 1)] == [2423, 2097]
    assert sum(last) < 0.8 * sum(first), (first, last)
    # after the run, the saved main against the evaluator's opponent from each seat
    run_dir.write_config(dump_config(cfg))  # as `msagent train` does
    final = final_evaluation(cfg.model_copy(update={"services": cfg.services.model_copy(
        update={"evaluator": cfg.services.evaluator.model_copy(update={"final_games": 40})})}),
        run_dir, result)
    rows = final["games"]
    assert [(r["opponent"], r["seat"], r["games"]) for r in rows] == [
        ("bot:random", 0, 20), ("bot:random", 1, 20)], rows
    assert sum(r["win_rate"] for r in rows) / 2 >= 0.6, rows  # random vs random: 0.44
    saved = final["judged"]["seats"]  # the judge's exam of the saved weights, too
    assert sum(saved[s]["losing"] for s in (0, 1)) < 0.8 * sum(first), (saved, first)


def mixed_players(tmp_path: Path) -> str:
    """The example's players, each with its own network and algorithm: main with the run's
    CNN and PPO, the main exploiter with the example MLP and user algorithm, the league
    exploiter with a smaller MLP and IMPALA."""
    (tmp_path / "small_agent.py").write_text(MLP_AGENT.replace(
        "NetworkConfig(hidden=(32,))", "NetworkConfig(hidden=(16,), flatten=True)"))
    mlp = EXAMPLES / "tictactoe" / "tictactoe_mlp_agent.py"
    kl_pg = EXAMPLES / "algorithms" / "kl_pg.py"
    return ('league.players=[{id = "main", role = "main", env_share = 10}, '
            f'{{id = "main_exploiter", role = "main_exploiter", agent = {json.dumps(str(mlp))}, '
            f'algorithm = {{script = {json.dumps(str(kl_pg))}, '
            'settings = {lr = 0.003, kl_coef = 0.05}}}, '
            '{id = "league_exploiter", role = "league_exploiter", '
            f'agent = {json.dumps(str(tmp_path / "small_agent.py"))}, '
            'algorithm = {name = "impala", lr = 0.0005}}]')


def algorithm_states(run_dir: RunDir, step: int) -> dict[str, dict[str, Any]]:
    """Each player's algorithm state in checkpoint ``step``."""
    found = run_dir.load_checkpoint(step)
    return {p: {**(state := unflatten_state(*_part(found, p)))["ppo"], "policy": state["policy"]}
            for p in found.state["learners"]}


def _part(found: Any, player: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A player's tensors and skeleton in a league checkpoint."""
    tensors, part = player_part(found.tensors, found.state, player)
    return tensors, part["skeleton"]


def _check_mixed(states: dict[str, dict[str, Any]]) -> None:
    """Each player's state is its own algorithm's: only the user algorithm keeps a reference
    network, the league exploiter's optimizer has its own learning rate; each network is its
    agent script's (the CNN's first layer, 64 and 16 units)."""
    assert "actor.0.convs.0.weight" in states["main"]["policy"]
    first = {p: tuple(states[p]["policy"]["actor.0.weight"].shape)
             for p in ("main_exploiter", "league_exploiter")}
    assert first == {"main_exploiter": (64, 18), "league_exploiter": (16, 18)}, first
    assert "reference" in states["main_exploiter"], list(states["main_exploiter"])
    assert "reference" not in states["main"] and "reference" not in states["league_exploiter"]
    lrs = {p: s["optimizer"]["param_groups"][0]["lr"] for p, s in states.items()}
    assert lrs["league_exploiter"] == 0.0005 and lrs["main_exploiter"] == 0.003, lrs
    assert lrs["main"] <= 0.001, lrs  # the run's [algorithm] (its lr decays over the run)


@pytest.mark.slow
def test_resume_restores_the_league_exactly_and_versions_go_on(inline_only: str,
                                                                tmp_path: Path) -> None:
    """Its players have three networks and learn with three algorithms (the run's, a user's,
    IMPALA): each resumes its own; the run's players are then evaluated and exported."""
    cfg = league_config(tmp_path, "local", "run.stop.time_s=300", "services.evaluator.num=0",
                        mixed_players(tmp_path),
                        *(f"league.roles.{role}.snapshot_every_updates=2" for role in ROLES))
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    # each run is stopped (STOP file) once what is checked has happened, not after a fixed time
    first = train_until(cfg, run_dir, lambda: _snapshotted(run_dir, {}), 120,
                        "every player's first snapshot after the initial one")
    saved = run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS)
    _check_mixed(algorithm_states(run_dir, saved.step))
    plan = plan_resume(cfg, run_dir)
    assert plan.step == saved.step and plan.league == saved.state["league"]
    assert plan.league["players"] and plan.league["historical"]
    versions = {p: f["version"] for p, f in first["league"]["players"].items()}
    second = train_until(cfg, run_dir, lambda: _snapshotted(run_dir, versions), 120,
                         "every player's snapshot past its version at the checkpoint",
                         resume=plan)
    for player, version in versions.items():
        assert second["league"]["players"][player]["version"] > version
    again = run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS).state["league"]
    before = {h["ref"] for h in plan.league["historical"]}
    assert before <= {h["ref"] for h in again["historical"]}  # no snapshot forgotten
    assert again["reported"] > plan.league["reported"]  # counts went on from the saved ones
    # the league database holds every result of both generations, once, and every snapshot
    with sqlite3.connect(run_dir.path / DATABASE_NAME) as db:
        seqs = [s for (s,) in db.execute("select seq from matches order by id")]
        generations = db.execute("select generation, reported from generations").fetchall()
        snaps = {s for (s,) in db.execute("select participant from snapshots")}
        cut = db.execute("select reported, versions from checkpoints where generation = 0 "
                         "and step = ?", (plan.step,)).fetchone()
    assert seqs == list(range(1, again["reported"] + 1))
    assert generations == [(0, 0), (1, plan.league["reported"])]
    saved_versions = {p: c["counters"]["version"] for p, c in saved.state["learners"].items()}
    assert (cut[0], json.loads(cut[1])) == (plan.league["reported"], saved_versions)  # the cut
    assert snaps == {h["ref"] for h in again["historical"]}
    _check_mixed(algorithm_states(run_dir, run_dir.checkpoints.latest(LEAGUE_REQUIRED_KEYS).step))
    # the CLI's evaluate and export build each player's own network from the saved config
    run_dir.write_config(dump_config(cfg))  # as `msagent train` does
    played = evaluate_run(run_dir.path, "main_exploiter", opponent="league_exploiter", games=4)
    assert played.games == 4
    exported = export_run(run_dir.path, "league_exploiter")
    assert exported.parity < 1e-4 and exported.info["source"]["policy"] == "league_exploiter"


def _beats_random(run_dir: RunDir) -> bool:
    """Whether the feed shows 6 snapshots and the main agent winning 80% of the newest
    evaluation games against the random bot, over at least 50 games from each seat."""
    state = feed_state(run_dir)
    rows = [r for r in state.get("eval") or [] if r["opponent"] == "bot:random"]
    games = sum(r["games"] for r in rows)
    return (len((state.get("league") or {}).get("historical", [])) >= 6 and len(rows) == 2
            and min(r["games"] for r in rows) >= 50
            and sum(r["wins"] for r in rows) >= 0.8 * games)


def _snapshotted(run_dir: RunDir, past: dict[str, int],
                 players: tuple[str, ...] = ROLES) -> bool:
    """Whether every one of ``players`` has a snapshot newer than ``past[player]`` (1, the
    initial snapshot, for a player not named)."""
    return all(run_dir.snapshots.newest(p, 1)
               and run_dir.snapshots.newest(p, 1)[0].version > past.get(p, 1) for p in players)


@pytest.mark.slow
def test_an_evaluator_averaging_snapshots_plays_and_keeps_its_games_from_the_league(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "run.stop.time_s=120",
                        "league.roles.main.snapshot_every_updates=3",
                        "services.evaluator.average_snapshots=3",
                        'services.evaluator.opponents=["bot:random"]')
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result = train_until(cfg, run_dir, lambda: _feed_games(run_dir, "bot:random") >= 24, 120,
                         "24 evaluation games against the random bot")
    rate, games = eval_win_rate(result, "bot:random")
    assert games >= 20, games  # the averaged player played
    # its games are not the player's own, so the league never saw the bot
    assert "bot:random" not in result["league"]["ladder"]


def _feed_games(run_dir: RunDir, opponent: str) -> int:
    """Evaluation games against ``opponent`` the run's feed shows so far."""
    return sum(r["games"] for r in feed_state(run_dir).get("eval") or []
               if r["opponent"] == opponent)


RPS_ENV = '''from pettingzoo.classic import rps_v2

from msagent.envs.wrappers import Flatten


def make_env():
    return Flatten(rps_v2.parallel_env(num_actions=3, max_cycles=10))  # Discrete(4) one-hot
'''
MLP_AGENT = '''from msagent.policy import NetworkConfig, Policy


def make_policy(observation_space, action_space, seed=None):
    return Policy(observation_space, action_space, NetworkConfig(hidden=(32,)), seed=seed)
'''
SMALLEST_LEAGUE = '''[scripts]
env = "env.py"
agent = "agent.py"

[[league.players]]
id = "main"
role = "main"

[[league.players]]
id = "main_exploiter"
role = "main_exploiter"
'''


def smallest_league(tmp_path: Path, env_source: str, *overrides: str) -> TrainConfig:
    """SMALLEST_LEAGUE over the game of ``env_source`` and MLP_AGENT, in local mode with one
    env worker, quiet; ``overrides`` are ``--set`` strings."""
    (tmp_path / "env.py").write_text(env_source)
    (tmp_path / "agent.py").write_text(MLP_AGENT)
    (tmp_path / "league.toml").write_text(SMALLEST_LEAGUE)
    return load_config(tmp_path / "league.toml", [
        f"run.root={json.dumps(str(tmp_path / 'runs'))}", 'run.mode="local"',
        "logging.progress=false", "logging.tensorboard=false", "services.env_worker.num=1",
        *overrides])


def test_the_smallest_league_config_trains_a_game_it_never_saw(inline_only: str,
                                                              tmp_path: Path) -> None:
    """No learner keys (a league's defaults: async learners, a small policy lag) on PettingZoo's
    rock-paper-scissors, whose Discrete observations go through ``Flatten``."""
    cfg = smallest_league(tmp_path, RPS_ENV, "run.stop.time_s=120",
                          "services.env_worker.num_envs=8",
                          "league.roles.main.snapshot_every_updates=2",
                          "league.roles.main_exploiter.snapshot_every_updates=2")
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    players = ("main", "main_exploiter")
    result = train_until(cfg, run_dir, lambda: _snapshotted(run_dir, {}, players), 120,
                         "both players to update")
    assert result["stop_reason"] == STOP_FILE_REASON, result
    assert all(result["league"]["players"][p]["version"] > 1 for p in players)
    assert result["league"]["summary"]["matches"] > 0
    # the run left no topics on the backend it found: a next run there starts afresh
    assert state.installed().forget_topics() == 0



@pytest.mark.slow
def test_a_league_over_its_model_pool_memory_budget_plays_snapshots_from_files(
        inline_only: str, tmp_path: Path) -> None:
    cfg = league_config(tmp_path, "local", "run.stop.time_s=120", "services.evaluator.num=0",
                        "services.model_pool.memory_mib=0.001",  # every frozen one but one
                        *(f"league.roles.{role}.snapshot_every_updates=2" for role in ROLES))
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    spill, spilled = run_dir.path / SPILL_NAME, [0]

    def ready() -> bool:
        spilled[0] = max(spilled[0], len(list(spill.glob(f"*{SPILL_SUFFIX}"))))
        return spilled[0] >= 6 and len(_later_snapshots_played(run_dir)) >= 3

    # a snapshot past version 2 spilled as soon as any later one froze (within a second or
    # two), so games against three of them mean env workers pulled snapshots from files
    train_until(cfg, run_dir, ready, 120, "6 spilled snapshots and games against 3 snapshots "
                "past version 2")
    assert not spill.exists()  # the spill lived as long as the pool


def _later_snapshots_played(run_dir: RunDir) -> set[str]:
    """Historical snapshots past version 2 that the payoff table has games against."""
    pairs = ((feed_state(run_dir).get("league") or {}).get("payoff") or {}).get("pairs", [])
    return {name for a, b, *counts in pairs for name in (a, b)
            if sum(counts) > 0 and ":" in name and int(name.rsplit(":", 1)[1]) > 2}


KUHN_ENV = '''import pyspiel


def make_env():
    return pyspiel.load_game("kuhn_poker")
'''


KL_PG = (f"algorithm.script={json.dumps(str(EXAMPLES / 'algorithms' / 'kl_pg.py'))}",
         "algorithm.settings={lr = 0.003, epochs = 4, kl_coef = 0.05, reference_rate = 0.1}")
"""The example user algorithm (a KL-regularized policy gradient), as its CartPole TOML sets it."""


MAGNET = ("algorithm.magnet_coef=0.2", "algorithm.magnet_rate=0.05")
"""PPO with its magnet (magnetic mirror descent's KL term toward a slowly following copy)."""


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", [(), KL_PG, MAGNET], ids=["ppo", "user_kl_pg", "magnet"])
def test_a_kuhn_league_trains_until_its_main_agent_s_nash_conv_is_low(
        inline_only: str, tmp_path: Path, algorithm: tuple[str, ...]) -> None:
    """No bots: the evaluator only measures NashConv (an untrained network's is about 0.9);
    with PPO, with the example user algorithm (``examples/algorithms/kl_pg.py``, which
    with an lr of 1e-9 did not reach 0.7 in 20 s) and with PPO's magnet."""
    cfg = smallest_league(tmp_path, KUHN_ENV, "run.stop.time_s=150", "run.stop.nash_conv=0.7",
                          "services.evaluator.nash_conv_every_s=1",
                          "services.env_worker.num_envs=32", *algorithm)
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)
    result = train_until(cfg, run_dir, lambda: False, 150, "NashConv 0.7")
    assert result["stop_reason"].startswith("nash_conv "), result["stop_reason"]
    measures = [m for m in result["league"]["nash_conv"] if m["player"] == "main"]
    versions = [m["version"] for m in measures]
    assert len(measures) >= 2 and versions == sorted(set(versions)), measures
    assert measures[0]["nash_conv"] > 0.85 and measures[-1]["nash_conv"] <= 0.7, measures
    assert not result["league"]["eval"]  # nothing to play against: no games
    feed = feed_state(run_dir)
    assert feed["nash_conv"]["main"]["nash_conv"] == measures[-1]["nash_conv"]
    with sqlite3.connect(run_dir.path / DATABASE_NAME) as db:  # every measure kept
        kept = db.execute("select version, value from nash_convs where player = 'main' "
                          "order by id").fetchall()
    assert kept == [(m["version"], m["nash_conv"]) for m in measures]
    # the league's mixture of its snapshots, solved at the end at the latest (default [league.
    # mixture]): kept in its state, measured beside main, each seat's weights a distribution
    mixture = result["league"]["mixture"]
    assert feed["league"]["mixture"] == mixture
    snapshots = {h["ref"] for h in feed["league"]["historical"]}
    for seat in mixture["seats"]:
        assert set(seat) <= snapshots and sum(seat.values()) == pytest.approx(1.0)
    ours = [m for m in result["league"]["nash_conv"] if m["player"] == "league"]
    assert ours[-1]["nash_conv"] == mixture["nash_conv"] and ours[-1]["version"] == \
        mixture["members"] == len(snapshots)


FLAKY_RPS_ENV = RPS_ENV.replace("def make_env():", '''import random

_crashes = random.Random(0)


class Flaky(Flatten):
    """Rock-paper-scissors on a game engine that crashes in one step of 500."""

    def step(self, actions):
        if _crashes.random() < 0.002:
            raise ConnectionResetError("the game engine went away")
        return super().step(actions)


def make_env():''').replace("return Flatten(", "return Flaky(")
ROCK_BOT = '''def act(observation, action_mask):
    return 0
'''


@pytest.mark.slow
def test_a_crashing_game_engine_costs_its_games_not_the_workers_or_the_evaluator(
        inline_only: str, tmp_path: Path) -> None:
    (tmp_path / "rock.py").write_text(ROCK_BOT)
    cfg = smallest_league(tmp_path, FLAKY_RPS_ENV, "run.stop.time_s=40",
                          "services.env_worker.num_envs=8", "services.evaluator.pause_s=0",
                          f"league.bots.rock={json.dumps(str(tmp_path / 'rock.py'))}")
    assert "return Flaky(" in (tmp_path / "env.py").read_text()
    run_dir = RunDir.create(cfg.run.root, cfg.run.name)

    def crashed_and_went_on() -> bool:
        """3 games lost to the engine, the evaluator's too, both learners updated twice."""
        feed = feed_state(run_dir)
        log = run_dir.log_path.read_text() if run_dir.log_path.exists() else ""
        return (feed.get("progress", {}).get("counters", {}).get("env_errors", 0) >= 3
                and feed.get("progress", {}).get("updates", 0) >= 6
                and sum(row["games"] for row in feed.get("eval", [])) > 0
                and "msagent.evaluator" in log and "the game engine went away" in log)

    # stopped once the feed shows it (time_s is a cap for a slow machine)
    result = train_until(cfg, run_dir, crashed_and_went_on, 60, "games lost to the engine")
    assert result["env_errors"] >= 3 and result["replacements"] == []
    assert all(result["league"]["players"][p]["version"] > 1 for p in ("main", "main_exploiter"))
    assert sum(row["games"] for row in result["league"]["eval"]) > 0
    log = run_dir.log_path.read_text()
    assert "the game engine went away (the game is dropped, its env rebuilt)" in log
    assert "msagent.evaluator" in log  # the evaluator's games broke off too, and went on
