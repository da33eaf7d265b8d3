"""The plan of a single-policy run: a league of one player, ``main``, that plays every seat of
its game itself (no league service). Env workers insert into the replay buffer and (central
mode) ask the inference servers; the learner samples its table, publishes ``params/main``
and pushes snapshots to the model pool. Store readers may feed it beside or instead of env
workers (``[data]``)."""

from __future__ import annotations

from msagent.config import TrainConfig
from msagent.services.env_worker import WorkerSettings
from msagent.services.learner import Learner, LearnerSettings
from msagent.services.store_reader import ReaderSettings, StoreReader
from msagent.train.gpu_share import gpu_instances, gpu_resources
from msagent.train.run_plan import (Launch, RunPlan, buffer_launch, custom_launches,
                                    inference_launch, model_pool_launch, workers_launch)
from msagent.train.run_services import (RunInfo, group_settings, policy_scripts, queue_room,
                                        resources_of)
from msagent.user_scripts import game_factory
from msagent.vocabulary import PolicyScripts

POLICY_ID = "main"


def single_plan(cfg: TrainConfig, run: RunInfo) -> RunPlan:
    """What a single-policy run launches: one learner, its table, and its feeders."""
    sv, table = cfg.services, cfg.table_config()
    playing = cfg.data.source != "store"
    seats = game_seats(policy_scripts(cfg)) if playing else 1
    feeds = fragments_per_round(cfg, seats)
    batch = sv.learner.batch_fragments or sum(feeds.values())
    gpus = gpu_instances(cfg, [sv.learner])
    return RunPlan(
        learners={POLICY_ID: Launch(Learner, num=sv.learner.num,
                                    resources=gpu_resources(sv.learner, gpus),
                                    args=(learner_settings(cfg, run, seats, batch),))},
        workers=workers_launch(cfg, worker_settings(cfg, run, seats, batch)) if playing else None,
        buffer=buffer_launch(cfg, [table]), model_pool=model_pool_launch(cfg, run),
        batches={POLICY_ID: sum(feeds.values())}, fixed_batch=bool(sv.learner.batch_fragments),
        inference=inference_launch(cfg, gpus)
        if sv.inference.mode == "central" and playing else None,
        readers=readers_launch(cfg, run) if "readers" in feeds else None,
        mixed=cfg.data.source == "mixed", custom=custom_launches(cfg))


def readers_launch(cfg: TrainConfig, run: RunInfo) -> Launch:
    """The store readers that feed recorded games to the learner."""
    return Launch(StoreReader, num=cfg.data.readers,
                  resources=resources_of(cfg.services.env_worker),
                  args=(reader_settings(cfg, cfg.table_config().name, run.generation),))


def learner_settings(cfg: TrainConfig, run: RunInfo, seats: int, batch: int) -> LearnerSettings:
    """The single policy's learner: a sync one may take the fragments already buffered."""
    sv = cfg.services
    return LearnerSettings(
        scripts=policy_scripts(cfg), table=cfg.table_config().name,
        policy_id=POLICY_ID, batch_fragments=batch,
        max_policy_lag=policy_lag(sv.learner.max_policy_lag, sv.learner.sync, seats),
        publish_every=sv.learner.publish_every,
        take_buffered=share_of(sv.env_worker.num_envs, seats) > 0 and sv.learner.sync
        and sv.learner.num == 1,
        dump_model_every=sv.learner.dump_model_every, run_dir=run.run_dir,
        resume_step=run.resume_step, **group_settings(cfg, run))


def worker_settings(cfg: TrainConfig, run: RunInfo, seats: int, batch: int) -> WorkerSettings:
    """Every env worker's settings: the single policy plays every seat of each game."""
    sv, table = cfg.services, cfg.table_config().name
    return WorkerSettings(
        scripts=policy_scripts(cfg), num_envs=sv.env_worker.num_envs,
        fragment_len=sv.env_worker.fragment_len, policy_id=POLICY_ID, table=table,
        central=sv.inference.mode == "central", sync=sv.learner.sync,
        generation=run.generation, restart_failed_envs=sv.env_worker.restart_failed_envs,
        round_fragments=share_of(sv.env_worker.num_envs, seats),
        max_policy_lag=policy_lag(sv.learner.max_policy_lag, sv.learner.sync, seats),
        table_room={table: queue_room(sv.learner, batch)},
        rate_limited=(table,) if sv.buffer.samples_per_insert > 0 else ())


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
