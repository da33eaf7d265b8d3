"""A run's plan: every service it launches, with what, built from the config without launching
anything (``single_plan`` for one policy, a league of one; ``league_plan`` for a league). The
wiring (``wiring.connect_services``) launches a plan; this module holds the plan's types and
the launches every kind of run shares (inference, buffer, model pool, env workers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from msagent.buffer import TableConfig
from msagent.config import TrainConfig
from msagent.runtime import Resources
from msagent.services.custom import user_service
from msagent.services.env_worker import EnvWorker, WorkerSettings
from msagent.services.inference import InferenceServer, configured
from msagent.services.model_pool import ModelPoolService
from msagent.services.replay_buffer import ReplayBufferService
from msagent.train.gpu_share import gpu_resources
from msagent.train.run_services import RunInfo, model_pool_kwargs, policy_scripts, resources_of


@dataclass(frozen=True)
class Launch:
    """One service to launch: its class, how many instances, and what each is built with."""

    cls: type
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    num: int = 1
    name: str | None = None
    resources: Resources | None = None


@dataclass
class RunPlan:
    """What a run launches (None: not in this run) and how its learners' batches are sized.

    Attributes:
        learners: Trainable player -> its learner (one player, ``main``, in a single-policy run).
        workers: The env workers that play (None: only store readers feed the learner).
        buffer: The replay buffer with one table per player.
        model_pool: The versioned model pool.
        batches: Player -> fragments one round of every feeder makes for it (its batch unless
            ``fixed_batch``).
        fixed_batch: ``services.learner.batch_fragments`` is set, or a league (async learners):
            the batch does not shrink when env workers are lost.
        inference: Central inference servers (None: env workers act locally).
        readers: Store readers (offline data) beside or instead of env workers.
        league: The league service that hands out matches (None: one policy plays itself).
        evaluator: The evaluator (a PSRO run's meta-game evaluators).
        mixed: Readers feed beside env workers (the driver watches both).
        restore: (run dir, league state) whose snapshots go back into the pool once started.
        custom: The user's own services by name (``[services.custom]``).
    """

    learners: dict[str, Launch]
    workers: Launch | None
    buffer: Launch
    model_pool: Launch
    batches: dict[str, int]
    fixed_batch: bool = False
    inference: Launch | None = None
    readers: Launch | None = None
    league: Launch | None = None
    evaluator: Launch | None = None
    mixed: bool = False
    restore: tuple[str, dict[str, Any]] | None = None
    custom: dict[str, Launch] = field(default_factory=dict)


def inference_launch(cfg: TrainConfig, gpus: int) -> Launch:
    """The central inference servers: each batches the requests of its share of env workers."""
    sv = cfg.services
    per_server = -(-sv.env_worker.num // max(sv.inference.num, 1))  # ceil
    return Launch(configured(sv.inference.batch or per_server, sv.inference.max_wait_ms),
                  num=sv.inference.num, name=InferenceServer.__name__,
                  resources=gpu_resources(sv.inference, gpus),
                  args=(policy_scripts(cfg), sv.inference.cache_size, sv.inference.device))


def buffer_launch(cfg: TrainConfig, tables: list[TableConfig]) -> Launch:
    """The replay buffer service with the run's tables."""
    return Launch(ReplayBufferService, resources=resources_of(cfg.services.buffer),
                  args=(tables,))


def model_pool_launch(cfg: TrainConfig, run: RunInfo) -> Launch:
    """The model pool (in memory, spilling into the run directory, or on Redis)."""
    return Launch(ModelPoolService, resources=resources_of(cfg.services.model_pool),
                  kwargs=model_pool_kwargs(cfg, run))


def workers_launch(cfg: TrainConfig, settings: WorkerSettings) -> Launch:
    """The env workers, every one with the same settings (each seeds from its own index)."""
    sv = cfg.services.env_worker
    return Launch(EnvWorker, num=sv.num, resources=resources_of(sv), args=(settings,))


def custom_launches(cfg: TrainConfig) -> dict[str, Launch]:
    """The user's services, each built from its ``settings`` in its own process."""
    return {name: Launch(user_service(name, section.script, section.class_name),
                         num=section.num, name=name, resources=resources_of(section),
                         args=(dict(section.settings),))
            for name, section in cfg.services.custom.items()}
