"""All the wiring of a training run in one readable function (as Sample Factory's
``connect_components``): which services start, with what, and how they find each other.

Services find each other by name through the registry: env workers insert into
``ReplayBufferService`` and (central mode) ask ``InferenceServer``; the learner samples
``ReplayBufferService``, publishes ``params/<policy>`` and pushes to ``ModelPoolService``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msagent.config import TrainConfig
from msagent.train.gpu_share import gpu_instances, gpu_resources
from msagent.train.supported import check_supported
from msagent.rundir.directory import SPILL_NAME
from msagent.runtime import ServiceHandle, launch
from msagent.services.env_worker import EnvWorker, WorkerSettings
from msagent.services.inference import InferenceServer, PolicyScripts, configured
from msagent.services.learner import Learner, LearnerSettings
from msagent.services.learner_publish import PublishSettings
from msagent.services.model_pool import ModelPoolService
from msagent.services.replay_buffer import ReplayBufferService
from msagent.services.store_reader import ReaderSettings, StoreReader
from msagent.user_scripts import game_factory

POLICY_ID = "main"


@dataclass
class Services:
    """Handles of one run's services.

    ``learners`` has one learner per trainable player (one in a single-policy run), and
    ``batches`` each one's fragments per update with every env worker alive.
    """

    buffer: ServiceHandle
    model_pool: ServiceHandle
    learners: dict[str, ServiceHandle]
    inference: ServiceHandle | None
    workers: ServiceHandle
    batches: dict[str, int] = field(default_factory=dict)
    league: ServiceHandle | None = None
    evaluator: ServiceHandle | None = None
    readers: ServiceHandle | None = None
    """Store readers beside env workers (``data.source = "mixed"``)."""
    fixed_batch: bool = False
    """``services.learner.batch_fragments`` is set: the learners' batch stays that size when
    env workers are lost (``batches`` still says what one round of all workers makes)."""

    @property
    def learner(self) -> ServiceHandle:
        """The first (in a single-policy run, the only) learner."""
        return next(iter(self.learners.values()))

    def all(self) -> list[ServiceHandle]:
        """Every handle, workers first (the order to stop them in)."""
        found = [self.workers, self.readers, self.evaluator, self.inference,
                 *self.learners.values(),
                 self.league, self.buffer, self.model_pool]
        return [h for h in found if h is not None]

    def stateful(self) -> list[ServiceHandle]:
        """The services whose death ends the run (they hold state a replacement lacks)."""
        found = [*self.learners.values(), self.league, self.buffer, self.model_pool]
        return [h for h in found if h is not None]


@dataclass
class RunInfo:
    """Who this run is: where it writes, its key namespace, and where it resumes from.

    Attributes:
        run_dir: The run directory (None: write nothing, e.g. in tests).
        run_id: Namespaces the run's keys in a shared model pool (kept across resumes).
        resume_step: The checkpoint the learner continues from (None: a fresh start).
        generation: How many times the run was resumed (part of the env workers' seeds).
        league_state: The league's state to continue from (a resumed league run).
    """

    run_dir: str | None = None
    run_id: str = ""
    resume_step: int | None = None
    generation: int = 0
    league_state: dict[str, Any] | None = None


def connect_services(cfg: TrainConfig, run: RunInfo) -> Services:
    """Start the run's services and return their handles.

    Every service's instances are built in parallel (``launch(wait=False)``, then one wait for
    all): none needs another to be built. If one fails to start, all are stopped before the
    error is raised.
    """
    check_supported(cfg)
    if cfg.league is not None:
        from msagent.train.league_wiring import connect_league

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
        readers = start(StoreReader, num=cfg.data.readers, resources=_res(sv.env_worker),
                        args=(reader_settings(cfg, table.name, run.generation),)) \
            if "readers" in feeds else None
        restart = sv.env_worker.restart_failed_envs
        workers = start(EnvWorker, num=sv.env_worker.num, resources=_res(sv.env_worker),
                        args=(WorkerSettings(scripts, sv.env_worker.num_envs,
                                             sv.env_worker.fragment_len, POLICY_ID, table.name,
                                             central, sv.learner.sync, run.generation,
                                             restart_failed_envs=restart,
                                             round_fragments=share,
                                             max_policy_lag=lag,
                                             table_room={table.name: queue_room(sv.learner,
                                                                                batch)}),)) \
            if playing else readers
        buffer = start(ReplayBufferService, resources=_res(sv.buffer), args=([table],))
        model_pool = start(ModelPoolService, resources=_res(sv.model_pool),
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


def queue_room(learner: Any, batch: int) -> int:
    """Fragments an async learner's table may hold before env workers wait to ship more (0:
    never wait; sync workers wait for versions instead)."""
    if learner.sync:
        return 0
    batches = learner.queued_batches
    if batches is None:
        batches = max(1, learner.max_policy_lag - 1)
    return batches * batch


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


def wait_all(started: list[ServiceHandle]) -> None:
    """Wait until every launched service is built."""
    for handle in started:
        handle.wait_ready()


def stop_started(started: list[ServiceHandle]) -> None:
    """Stop what was launched (after one failed to start)."""
    for handle in reversed(started):
        try:
            handle.wait_ready()  # instances still starting must be known to be stopped
        except Exception:
            pass
        handle.shutdown()


def policy_scripts(cfg: TrainConfig) -> PolicyScripts:
    """The user's scripts and env parameters, as every service needs them."""
    return PolicyScripts(str(cfg.scripts.env), str(cfg.scripts.agent), dict(cfg.env),
                         cfg.run.seed)


def model_pool_kwargs(cfg: TrainConfig, run: RunInfo) -> dict[str, Any]:
    """The model pool's store settings; an in-memory pool spills into the run directory."""
    section = cfg.services.model_pool
    spill = str(Path(run.run_dir) / SPILL_NAME) if run.run_dir else None
    return {"url": section.url, "keep_last": section.keep_last, "namespace": run.run_id,
            "spill_dir": spill, "memory_mib": section.memory_mib}


def _res(section: Any) -> Any:
    """A service section's resources."""
    return section.resources.to_resources()


def group_settings(cfg: TrainConfig, run: RunInfo) -> dict[str, Any]:
    """The learner-group fields of a player's ``LearnerSettings``."""
    sv = cfg.services.learner
    return {"group_size": sv.num, "run_id": run.run_id, "generation": run.generation,
            "collective_timeout_s": sv.collective_timeout_s, "algorithm": cfg.algorithm.name,
            "publish": publish_settings(cfg), "device": sv.device}


def publish_settings(cfg: TrainConfig) -> PublishSettings | None:
    """The learner's ``[publish]`` settings (None when nothing is published)."""
    p = cfg.publish
    return PublishSettings(p.models, p.game, p.every_snapshots) if p.models else None
