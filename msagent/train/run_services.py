"""What every run's plan and its wiring share: the run's service handles (``Services``), who
the run is (``RunInfo``), and the settings and start/stop helpers every service of a run
gets (``single_plan`` and ``league_plan`` build on it; ``wiring`` launches their plans)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msagent.config import AlgorithmSection, LearnerSection, TrainConfig
from msagent.rundir.directory import SPILL_NAME
from msagent.runtime import ServiceHandle
from msagent.services.learner import PublishSettings
from msagent.vocabulary import PolicyScripts


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
    """``services.learner.batch_fragments`` is set, or a league's async learners: the
    learners' batch stays its size when env workers are lost (``batches`` still says what one
    round of all workers makes)."""
    custom: dict[str, ServiceHandle] = field(default_factory=dict)
    """The user's own services by name."""
    restartable: set[str] = field(default_factory=set)
    """The user services whose dead instances are replaced (the others' death ends the run)."""

    @property
    def learner(self) -> ServiceHandle:
        """The first (in a single-policy run, the only) learner."""
        return next(iter(self.learners.values()))

    def all(self) -> list[ServiceHandle]:
        """Every handle, workers first (the order to stop them in)."""
        found = [self.workers, self.readers, self.evaluator, self.inference,
                 *self.learners.values(),
                 self.league, self.buffer, self.model_pool, *self.custom.values()]
        return [h for h in found if h is not None]

    def stateful(self) -> list[ServiceHandle]:
        """The services whose death ends the run (they hold state a replacement lacks)."""
        found = [*self.learners.values(), self.league, self.buffer, self.model_pool,
                 *(h for n, h in self.custom.items() if n not in self.restartable)]
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


def queue_room(learner: Any, batch: int) -> int:
    """Fragments an async learner's table may hold before env workers wait to ship more (0:
    never wait; sync workers wait for versions instead)."""
    if learner.sync:
        return 0
    batches = learner.queued_batches
    if batches is None:
        batches = max(1, learner.max_policy_lag - 1)
    return batches * batch


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
    owners = [*cfg.league.player_ids(), *cfg.league.frozen_agents] if cfg.league else []
    agents = {p: str(cfg.agent_of(p)) for p in owners}
    return PolicyScripts(str(cfg.scripts.env), str(cfg.scripts.agent), dict(cfg.env),
                         cfg.run.seed, {p: a for p, a in agents.items()
                                        if a != str(cfg.scripts.agent)})


def model_pool_kwargs(cfg: TrainConfig, run: RunInfo) -> dict[str, Any]:
    """The model pool's store settings; an in-memory pool spills into the run directory."""
    section = cfg.services.model_pool
    spill = str(Path(run.run_dir) / SPILL_NAME) if run.run_dir else None
    return {"url": section.url, "keep_last": section.keep_last, "namespace": run.run_id,
            "spill_dir": spill, "memory_mib": section.memory_mib}


def resources_of(section: Any) -> Any:
    """A service section's resources."""
    return section.resources.to_resources()


def group_settings(cfg: TrainConfig, run: RunInfo, algorithm: AlgorithmSection | None = None,
                   learner: LearnerSection | None = None) -> dict[str, Any]:
    """The learner-group and algorithm fields of a player's ``LearnerSettings`` (``algorithm``
    and ``learner``: the player's own, default the run's)."""
    sv, algorithm = learner or cfg.services.learner, algorithm or cfg.algorithm
    return {"group_size": sv.num, "run_id": run.run_id, "generation": run.generation,
            "collective_timeout_s": sv.collective_timeout_s, "algorithm": algorithm.name,
            "publish": publish_settings(cfg), "device": sv.device,
            "algorithm_script": algorithm.script,
            "algorithm_settings": dict(algorithm.settings),
            "ppo": algorithm.ppo_config(seed=cfg.run.seed),
            "callbacks": cfg.callbacks.settings()}


def publish_settings(cfg: TrainConfig) -> PublishSettings | None:
    """The learner's ``[publish]`` settings (None when nothing is published)."""
    p = cfg.publish
    return PublishSettings(p.models, p.game, p.every_snapshots) if p.models else None
