"""All the wiring of a training run in one readable function (as Sample Factory's
``connect_components``): which services start, with what, and how they find each other.

Services find each other by name through the registry: env workers insert into
``ReplayBufferService`` and (central mode) ask ``InferenceServer``; the learner samples
``ReplayBufferService``, publishes ``params/<policy>`` and pushes to ``ModelPoolService``.

A league run is wired by ``league_wiring``; both build on ``run_services`` (imports run one
way: this module imports ``league_wiring``, never the reverse).
"""

from __future__ import annotations

from typing import Any

from msagent.config import TrainConfig
from msagent.train.gpu_share import gpu_instances, gpu_resources
from msagent.train.league_wiring import connect_league
from msagent.train.run_services import (RunInfo, Services, group_settings, model_pool_kwargs,
                                        policy_scripts, queue_room, resources_of, stop_started,
                                        wait_all)
from msagent.train.supported import check_supported
from msagent.runtime import ServiceHandle, launch
from msagent.services.env_worker import EnvWorker, WorkerSettings
from msagent.services.inference import InferenceServer, configured
from msagent.services.learner import Learner, LearnerSettings
from msagent.services.model_pool import ModelPoolService
from msagent.services.replay_buffer import ReplayBufferService
from msagent.services.store_reader import ReaderSettings, StoreReader
from msagent.user_scripts import game_factory
from msagent.vocabulary import PolicyScripts

POLICY_ID = "main"


def connect_services(cfg: TrainConfig, run: RunInfo) -> Services:
    """Start the run's services and return their handles.

    Every service's instances are built in parallel (``launch(wait=False)``, then one wait for
    all): none needs another to be built. If one fails to start, all are stopped before the
    error is raised.
    """
    check_supported(cfg)
    if cfg.league is not None:
        return connect_league(cfg, run)
    sv, scripts = cfg.services, policy_scripts(cfg)
    table = cfg.table_config()
    started: list[ServiceHandle] = []

    def start(cls: type, **options: Any) -> ServiceHandle:
        handle = launch(cls, wait=False, **options)
        started.append(handle)
        return handle

    playing = cfg.data.source != "store"
    seats = game_seats(scripts) if playing else 1
    feeds = fragments_per_round(cfg, seats)
    lag = policy_lag(sv.learner.max_policy_lag, sv.learner.sync, seats)
    share = share_of(sv.env_worker.num_envs, seats)
    batch = sv.learner.batch_fragments or sum(feeds.values())
    try:  # the slowest to build first: Ray starts two processes at a time on two cores
        gpus = gpu_instances(cfg, 1)
        learner = start(Learner, num=sv.learner.num, resources=gpu_resources(sv.learner, gpus),
                        args=(LearnerSettings(
            scripts=scripts, ppo=cfg.ppo_config(), table=table.name, policy_id=POLICY_ID,
            batch_fragments=batch,
            max_policy_lag=lag,
            publish_every=sv.learner.publish_every,
            take_buffered=share > 0 and sv.learner.sync and sv.learner.num == 1,
            dump_model_every=sv.learner.dump_model_every, run_dir=run.run_dir,
            resume_step=run.resume_step, **group_settings(cfg, run)),))
        central = sv.inference.mode == "central" and playing
        per_server = -(-sv.env_worker.num // max(sv.inference.num, 1))  # ceil
        inference = start(configured(sv.inference.batch or per_server, sv.inference.max_wait_ms),
                          num=sv.inference.num, name=InferenceServer.__name__,
                          resources=gpu_resources(sv.inference, gpus),
                          args=(scripts, sv.inference.cache_size, sv.inference.device)) \
            if central else None
        readers = start(StoreReader, num=cfg.data.readers, resources=resources_of(sv.env_worker),
                        args=(reader_settings(cfg, table.name, run.generation),)) \
            if "readers" in feeds else None
        restart = sv.env_worker.restart_failed_envs
        workers = start(EnvWorker, num=sv.env_worker.num, resources=resources_of(sv.env_worker),
                        args=(WorkerSettings(scripts, sv.env_worker.num_envs,
                                             sv.env_worker.fragment_len, POLICY_ID, table.name,
                                             central, sv.learner.sync, run.generation,
                                             restart_failed_envs=restart,
                                             round_fragments=share,
                                             max_policy_lag=lag,
                                             table_room={table.name: queue_room(sv.learner,
                                                                                batch)}),)) \
            if playing else readers
        buffer = start(ReplayBufferService, resources=resources_of(sv.buffer), args=([table],))
        model_pool = start(ModelPoolService, resources=resources_of(sv.model_pool),
                           kwargs=model_pool_kwargs(cfg, run))
        wait_all(started)
    except BaseException:
        stop_started(started)
        raise
    return Services(buffer, model_pool, {POLICY_ID: learner}, inference, workers,
                    {POLICY_ID: sum(feeds.values())},
                    readers=readers if cfg.data.source == "mixed" else None,
                    fixed_batch=bool(sv.learner.batch_fragments))


def fragments_per_round(cfg: TrainConfig, seats: int = 1) -> dict[str, int]:
    """Fragments each kind of feeder ships per round (the learner's batch is their sum): one
    per env slot and seat (the single policy plays every seat of a game, one stream each)."""
    sv, data = cfg.services, cfg.data
    feeds = {}
    if data.source != "store":
        feeds["workers"] = sv.env_worker.num * sv.env_worker.num_envs * seats
    if data.source != "env":
        feeds["readers"] = data.readers * data.streams
    return feeds


def game_seats(scripts: PolicyScripts) -> int:
    """How many seats the user's game has (one throwaway game; 1 for a Gymnasium env)."""
    game = game_factory(scripts.env_script, scripts.env_params)()
    try:
        return len(game.seats)
    finally:
        game.close()


def policy_lag(configured: int, sync: bool, seats: int) -> int:
    """The learner's allowed lag: at least 1 for a sync run of a multi-seat game, whose seats'
    fragments may have begun before the workers' last wait (see EnvWorker._next_version)."""
    return max(configured, 1) if sync and seats > 1 else configured


def share_of(num_envs: int, seats: int) -> int:
    """A sync worker's share of the batch: what it ships before waiting for a new version (0,
    any round's fragments, for a one-seat game, whose rounds make one per slot)."""
    return num_envs * seats if seats > 1 else 0


def reader_settings(cfg: TrainConfig, table: str, generation: int) -> ReaderSettings:
    """What every store reader of the run gets."""
    d = cfg.data
    return ReaderSettings(
        scripts=policy_scripts(cfg), store=d.store, game=d.game,
        fragment_len=cfg.services.env_worker.fragment_len, streams=d.streams, window=d.window,
        refresh_s=d.refresh_s, min_records=d.min_records, max_uses=d.max_uses,
        newest_first=d.order == "newest", policy_id=POLICY_ID, table=table,
        sync=cfg.services.learner.sync, need_log_probs=cfg.algorithm.name != "bc",
        generation=generation)
