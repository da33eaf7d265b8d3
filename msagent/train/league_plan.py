"""The plan of a league run: one learner and one buffer table per trainable player, the
``LeagueService`` that hands out matches, env workers that play them, and an evaluator that
plays the main agent against the configured bots (PSRO's meta-game evaluators in a PSRO
run). Env workers ask the league for matches and report results to it; learners push
snapshots to the model pool, which the league names as frozen opponents."""

from __future__ import annotations

from typing import Any

from msagent.config import TrainConfig
from msagent.config.league import PSRO_SEATS, LeagueSection
from msagent.envs.teams import num_sides
from msagent.errors import ConfigError
from msagent.league_db import database_url
from msagent.league_db.recorder import DatabaseSettings
from msagent.rundir import RunDir
from msagent.runtime import ServiceHandle
from msagent.services.env_worker import LeagueSeats, WorkerSettings, home_players
from msagent.services.evaluator import Evaluator, EvaluatorSettings
from msagent.services.learner import Learner, LearnerSettings
from msagent.services.league import LeagueService
from msagent.services.model_pool import ModelPoolService
from msagent.train.gpu_share import gpu_instances, gpu_resources
from msagent.train.initial_weights import initial_weights
from msagent.train.run_plan import (Launch, RunPlan, buffer_launch, custom_launches,
                                    inference_launch, model_pool_launch, workers_launch)
from msagent.train.run_services import (RunInfo, group_settings, policy_scripts, queue_room,
                                        resources_of)
from msagent.user_scripts import game_factory
from msagent.vocabulary import ModelKey, PolicyRef


def player_batches(players: list[str], workers: int, num_envs: int,
                   shares: dict[str, int] | None = None) -> dict[str, int]:
    """Fragments per update of each player: the env slots it is home in (about one fragment
    per slot per update, as in a single-policy run)."""
    counts = {p: 0 for p in players}
    for index in range(workers):
        for player in home_players(players, index, num_envs, shares):
            counts[player] += 1
    return {p: max(1, n) for p, n in counts.items()}


def league_plan(cfg: TrainConfig, run: RunInfo) -> RunPlan:
    """What a league run launches: a learner and a table per trainable player, the league
    service, env workers that play its matches, and the evaluator."""
    sv, league = cfg.services, cfg.league
    players, shares = league.player_ids(), league.env_shares()
    tables = {p: f"{cfg.table_config().name}/{p}" for p in players}
    learners = {p: cfg.player_learner(p) for p in players}
    seats, exact, per_side = game_facts(policy_scripts(cfg))
    check_league_seats(league, seats)
    batches = {p: max(1, round(n * per_side)) for p, n in player_batches(
        players, sv.env_worker.num, sv.env_worker.num_envs, shares).items()}
    # one batch size for all: a player home in fewer env slots updates less often on batches
    # of the same size, not as often on tiny ones (the main job's exploiters, home in 4 of 48
    # slots, made 64-step updates nearly as often as main and took 40 % of a core from it)
    size = sv.learner.batch_fragments or max(batches.values())
    per_update = {p: learners[p].batch_fragments or size for p in batches}
    initial = initial_weights(cfg) if run.resume_step is None else {}
    gpus = gpu_instances(cfg, list(learners.values()))
    return RunPlan(
        learners={p: Launch(Learner, name=f"Learner-{p}", num=sv.learner.num,
                            resources=gpu_resources(learners[p], gpus),
                            args=(_learner_settings(cfg, run, p, tables[p], per_update[p],
                                                    initial.get(p)),)) for p in players},
        league=Launch(LeagueService, resources=resources_of(sv.league),
                      args=(league.to_settings(), cfg.run.seed, seats, run.league_state,
                            sv.model_pool.url, run.run_id, cfg.callbacks.settings(),
                            database_settings(cfg, run))),
        workers=workers_launch(cfg, _worker_settings(cfg, run, tables, per_update)),
        buffer=buffer_launch(cfg, [cfg.player_table_config(p, t) for p, t in tables.items()]),
        model_pool=model_pool_launch(cfg, run), batches=batches,
        fixed_batch=True,  # async learners: no round to wait for when a worker is lost
        inference=inference_launch(cfg, gpus) if sv.inference.mode == "central" else None,
        evaluator=_evaluator_launch(cfg, players[0], exact),
        restore=(run.run_dir, run.league_state) if run.league_state and run.run_dir else None,
        custom=custom_launches(cfg))


def database_settings(cfg: TrainConfig, run: RunInfo) -> DatabaseSettings | None:
    """Where the league writes its history: ``[league.database]``'s URL, else the run's own
    ``league.db`` (None: switched off, or a run with neither a directory nor a URL)."""
    section = cfg.league.database
    url = section.resolved_url() if section.enabled else ""
    if not section.enabled or not (url or run.run_dir):
        return None
    config = RunDir(run.run_dir).config_path if run.run_dir else None
    return DatabaseSettings(
        database_url(url, run.run_dir or ""), run.run_id or cfg.run.name, cfg.run.name,
        config.read_text() if config is not None and config.exists() else "",
        run.generation, run.resume_step)


def _worker_settings(cfg: TrainConfig, run: RunInfo, tables: dict[str, str],
                     per_update: dict[str, int]) -> WorkerSettings:
    """Every env worker's settings: the league's seats, tables and bots, and each table's room."""
    sv, league = cfg.services, cfg.league
    seats = LeagueSeats(tables, dict(league.bots), sv.inference.cache_size,
                        repeat=sv.env_worker.games_per_draw, shares=league.env_shares(),
                        frozen_greedy=greedy_members(cfg))
    return WorkerSettings(
        scripts=policy_scripts(cfg), num_envs=sv.env_worker.num_envs,
        fragment_len=sv.env_worker.fragment_len, policy_id=league.player_ids()[0],
        table=cfg.table_config().name, central=sv.inference.mode == "central", sync=False,
        generation=run.generation, league=seats,
        restart_failed_envs=sv.env_worker.restart_failed_envs,
        table_room={tables[p]: queue_room(cfg.player_learner(p), n)
                    for p, n in per_update.items()},
        rate_limited=tuple(t for p, t in tables.items()
                           if cfg.player_buffer(p).samples_per_insert > 0))


def check_league_seats(league: LeagueSection, seats: int) -> None:
    """Refuse a league whose seat settings do not fit the game's seat count."""
    if league.psro is not None and not league.psro.symmetric and seats != PSRO_SEATS:
        raise ConfigError(f"league.psro.symmetric = false makes one best response per seat of "
                          f"a {PSRO_SEATS}-seat game; this game has {seats} seats: set "
                          "symmetric = true")
    check_seat_weights(league, seats)


def greedy_members(cfg: TrainConfig) -> bool:
    """Whether PSRO's frozen members take their most likely action."""
    return cfg.league.psro is not None and cfg.league.psro.member_play == "greedy"


def league_snapshot_keys(state: dict[str, Any]) -> list[ModelKey]:
    """The frozen snapshots a league state names, oldest version first per player."""
    return sorted(PolicyRef.parse(h["ref"]).key for h in state.get("historical", []))


def restore_snapshots(model_pool: ServiceHandle, run_dir: RunDir,
                      state: dict[str, Any]) -> int:
    """Push the league's snapshots the pool lacks (an in-memory pool after a restart) back
    from the run directory, under their own versions; how many were pushed."""
    pushed = 0
    for key in league_snapshot_keys(state):
        if key in set(model_pool.call_all(ModelPoolService.list, key.policy_id)[0]):
            continue  # a Redis pool kept it
        got = model_pool.call_all(ModelPoolService.push, key.policy_id,
                                  run_dir.snapshots.load(key), {"frozen": True}, key.version)[0]
        if got != key:
            raise RuntimeError(f"snapshot {key} came back into the model pool as {got}")
        pushed += 1
    return pushed


def _learner_settings(cfg: TrainConfig, run: RunInfo, player: str, table: str,
                      batch: int, initial: dict[str, Any] | None = None) -> LearnerSettings:
    """One player's learner: its table, its topic, snapshots as the league orders, and the
    weights it starts from (None: a fresh network)."""
    sv = cfg.player_learner(player)
    group = group_settings(cfg, run, cfg.player_algorithm(player), sv)
    if player != "main":  # a league publishes its main agent for game clients
        group["publish"] = None
    return LearnerSettings(
        scripts=policy_scripts(cfg), batch_fragments=batch, policy_id=player, table=table,
        max_policy_lag=sv.max_policy_lag, publish_every=sv.publish_every, dump_model_every=0,
        run_dir=run.run_dir, resume_step=run.resume_step, league=True, initial_weights=initial,
        **group)


def _evaluator_launch(cfg: TrainConfig, player: str, exact: bool) -> Launch | None:
    """The evaluator against the configured opponents (default: every bot), if any, and of
    the player's NashConv on an ``exact`` game (a sequential OpenSpiel one); PSRO's meta-game
    evaluators in a PSRO run."""
    ev = cfg.services.evaluator
    if cfg.league.psro is not None:
        from msagent.services.evaluator import MetaEvaluator, MetaEvaluatorSettings

        settings = MetaEvaluatorSettings(policy_scripts(cfg), ev.num_envs,
                                         cfg.services.inference.cache_size,
                                         greedy=greedy_members(cfg))
        return Launch(MetaEvaluator, num=ev.num, resources=resources_of(ev), args=(settings,))
    opponents = list(ev.opponents) or [f"bot:{name}" for name in cfg.league.bots]
    nash_conv = ev.nash_conv_every_s > 0 and exact
    if ev.num == 0 or not (opponents or nash_conv or ev.judge):
        return None
    settings = EvaluatorSettings(policy_scripts(cfg), evaluated_player(cfg), opponents,
                                 dict(cfg.league.bots), ev.num_envs, ev.deterministic,
                                 pause_s=ev.pause_s, average_snapshots=ev.average_snapshots,
                                 nash_conv_every_s=ev.nash_conv_every_s if nash_conv else 0.0,
                                 nash_conv_max_histories=ev.nash_conv_max_histories,
                                 judge=ev.judge, judge_every_s=ev.judge_every_s)
    return Launch(Evaluator, num=ev.num, resources=resources_of(ev), args=(settings,))


def evaluated_player(cfg: TrainConfig) -> str:
    """The player the evaluator plays and measures (default: the league's first player)."""
    return cfg.services.evaluator.player or cfg.league.player_ids()[0]


def game_facts(scripts: Any) -> tuple[int, bool, float]:
    """How many sides a match of the user's game seats (its teams, or its seats), whether it
    is a sequential OpenSpiel game (its NashConv can be measured), and its seats per side (a
    player's fragments per env slot and round: one per seat of its side, so that a learner
    does not update several times per round and find the round's later fragments stale)."""
    from msagent.psro.neural import exact_game_in

    game = game_factory(scripts.env_script, scripts.env_params)()
    try:
        sides = num_sides(game)
        return sides, not isinstance(exact_game_in(game), str), len(game.seats) / sides
    finally:
        game.close()


def check_seat_weights(league: LeagueSection, seats: int) -> None:
    """Refuse seat weights that do not match the game's seat count, naming the player."""
    for entry in league.players:
        if entry.seat_weights is not None and len(entry.seat_weights) != seats:
            raise ConfigError(f"league.players {entry.id!r}: seat_weights has "
                              f"{len(entry.seat_weights)} weights; this game has {seats} seats")
