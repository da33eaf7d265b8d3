"""The wiring of a league run: one learner and one buffer table per trainable player, the
``LeagueService`` that hands out matches, env workers that play them, and an evaluator that
plays the main agent against the configured bots."""

from __future__ import annotations

import math
from typing import Any

from msagent.config import TrainConfig
from msagent.config.league import PSRO_SEATS, LeagueSection
from msagent.envs.teams import num_sides
from msagent.errors import ConfigError
from msagent.rundir import RunDir
from msagent.runtime import ServiceHandle, launch
from msagent.services.env_worker import EnvWorker, LeagueSeats, WorkerSettings
from msagent.services.evaluator import Evaluator, EvaluatorSettings
from msagent.services.inference import InferenceServer, configured
from msagent.services.learner import Learner, LearnerSettings
from msagent.services.league import LeagueService
from msagent.services.env_worker import home_players
from msagent.services.model_pool import ModelPoolService
from msagent.services.replay_buffer import ReplayBufferService
from msagent.train.gpu_share import gpu_instances, gpu_resources
from msagent.train.initial_weights import initial_weights
from msagent.train.run_services import (RunInfo, Services, group_settings, model_pool_kwargs,
                                        policy_scripts, queue_room, resources_of, stop_started,
                                        wait_all)
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


def connect_league(cfg: TrainConfig, run: RunInfo) -> Services:
    """Start a league run's services and return their handles (all built in parallel)."""
    sv, scripts, league = cfg.services, policy_scripts(cfg), cfg.league
    players = league.player_ids()
    tables = {p: f"{cfg.table_config().name}/{p}" for p in players}
    shares = league.env_shares()
    seats, exact, per_side = game_facts(scripts)
    batches = {p: max(1, round(n * per_side)) for p, n in player_batches(
        players, sv.env_worker.num, sv.env_worker.num_envs, shares).items()}
    per_update = {p: sv.learner.batch_fragments or n for p, n in batches.items()}
    if league.psro is not None and not league.psro.symmetric and seats != PSRO_SEATS:
        raise ConfigError(f"league.psro.symmetric = false makes one best response per seat of "
                          f"a {PSRO_SEATS}-seat game; this game has {seats} seats: set "
                          "symmetric = true")
    check_seat_weights(league, seats)
    initial = initial_weights(cfg) if run.resume_step is None else {}
    started: list[ServiceHandle] = []

    def start(cls: type, **options: Any) -> ServiceHandle:
        handle = launch(cls, wait=False, **options)
        started.append(handle)
        return handle

    gpus = gpu_instances(cfg, len(players))
    try:
        learners = {p: start(Learner, name=f"Learner-{p}", num=sv.learner.num,
                             resources=gpu_resources(sv.learner, gpus),
                             args=(_learner_settings(cfg, run, p, tables[p], per_update[p],
                                                     initial.get(p)),))
                    for p in players}
        league_handle = start(LeagueService, resources=resources_of(sv.league),
                              args=(league.to_settings(), cfg.run.seed, seats,
                                    run.league_state, sv.model_pool.url, run.run_id))
        central = sv.inference.mode == "central"
        per_server = -(-sv.env_worker.num // max(sv.inference.num, 1))
        inference = start(configured(sv.inference.batch or per_server, sv.inference.max_wait_ms),
                          num=sv.inference.num, name=InferenceServer.__name__,
                          resources=gpu_resources(sv.inference, gpus),
                          args=(scripts, sv.inference.cache_size, sv.inference.device)) \
            if central else None
        seats_cfg = LeagueSeats(tables, dict(league.bots), sv.inference.cache_size,
                                repeat=sv.env_worker.games_per_draw, shares=shares,
                                frozen_greedy=greedy_members(cfg))
        workers = start(EnvWorker, num=sv.env_worker.num, resources=resources_of(sv.env_worker),
                        args=(WorkerSettings(scripts, sv.env_worker.num_envs,
                                             sv.env_worker.fragment_len, players[0],
                                             cfg.table_config().name, central, False,
                                             run.generation, seats_cfg,
                                             sv.env_worker.restart_failed_envs,
                                             table_room={tables[p]: queue_room(
                                                 sv.learner, per_update[p])
                                                 for p in players}),))
        buffer = start(ReplayBufferService, resources=resources_of(sv.buffer),
                       args=([cfg.table_config(t) for t in tables.values()],))
        model_pool = start(ModelPoolService, resources=resources_of(sv.model_pool),
                           kwargs=model_pool_kwargs(cfg, run))
        evaluator = _start_evaluator(cfg, start, players[0], exact)
        wait_all(started)
        if run.league_state and run.run_dir:
            restore_snapshots(model_pool, RunDir.open(run.run_dir), run.league_state)
    except BaseException:
        stop_started(started)
        raise
    return Services(buffer, model_pool, learners, inference, workers, batches,
                    league_handle, evaluator, fixed_batch=bool(sv.learner.batch_fragments))


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
    sv = cfg.services.learner
    group = group_settings(cfg, run)
    if player != "main":  # a league publishes its main agent for game clients
        group["publish"] = None
    return LearnerSettings(
        scripts=policy_scripts(cfg), ppo=cfg.ppo_config(), batch_fragments=batch,
        policy_id=player, table=table, max_policy_lag=sv.max_policy_lag,
        publish_every=sv.publish_every, dump_model_every=0, run_dir=run.run_dir,
        resume_step=run.resume_step, league=True, initial_weights=initial, **group)


def _start_evaluator(cfg: TrainConfig, start, player: str,
                     exact: bool) -> ServiceHandle | None:
    """The evaluator against the configured opponents (default: every bot), if any, and of
    the player's NashConv on an ``exact`` game (a sequential OpenSpiel one); PSRO's meta-game
    evaluators in a PSRO run."""
    ev = cfg.services.evaluator
    if cfg.league.psro is not None:
        from msagent.services.evaluator import MetaEvaluator, MetaEvaluatorSettings

        settings = MetaEvaluatorSettings(policy_scripts(cfg), ev.num_envs,
                                         cfg.services.inference.cache_size,
                                         greedy=greedy_members(cfg))
        return start(MetaEvaluator, num=ev.num, resources=resources_of(ev), args=(settings,))
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
    return start(Evaluator, num=ev.num, resources=resources_of(ev), args=(settings,))


def scaled_batches(batches: dict[str, int], live: int, total: int) -> dict[str, int]:
    """Each player's batch while only ``live`` of ``total`` env workers run."""
    return {p: max(1, math.ceil(n * live / max(total, 1))) for p, n in batches.items()}


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
