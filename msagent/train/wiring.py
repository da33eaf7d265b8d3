"""All the wiring of a training run in one readable function (as Sample Factory's
``connect_components``): the run's plan says which services start and with what
(``single_plan``: one policy, a league of one; ``league_plan``: a league, PSRO included), and
``connect_services`` launches it.

The data path, one typed client per edge: env workers (``services/env_worker``) insert
fragments into the replay buffer (``BufferClient``), ask the inference servers for actions in
central mode, and, in a league, ask the league for matches and report results
(``LeagueClient``); each learner (``services/learner``) samples its table, publishes
``params/<player>`` and pushes snapshots to the model pool (``PoolClient``); the league names
those snapshots as frozen opponents, and the evaluator plays the main agent against the bots.
"""

from __future__ import annotations

from msagent.config import TrainConfig
from msagent.rundir import RunDir
from msagent.runtime import ServiceHandle, launch
from msagent.train.league_plan import league_plan, restore_snapshots
from msagent.train.run_plan import Launch, RunPlan
from msagent.train.run_services import RunInfo, Services, stop_started, wait_all
from msagent.train.single_plan import single_plan
from msagent.train.supported import check_supported


def connect_services(cfg: TrainConfig, run: RunInfo) -> Services:
    """Launch the run's plan and return the services' handles.

    Every service's instances are built in parallel (``launch(wait=False)``, then one wait for
    all): none needs another to be built. If one fails to start, all are stopped before the
    error is raised.
    """
    plan = plan_run(cfg, run)
    started: list[ServiceHandle] = []

    def start(spec: Launch | None) -> ServiceHandle | None:
        if spec is None:
            return None
        started.append(launch(spec.cls, spec.num, spec.name, spec.resources, spec.args,
                              spec.kwargs, wait=False))
        return started[-1]

    try:  # the slowest to build first: Ray starts two processes at a time on two cores
        custom = {name: start(spec) for name, spec in plan.custom.items()}
        learners = {player: start(spec) for player, spec in plan.learners.items()}
        league, inference = start(plan.league), start(plan.inference)
        readers = start(plan.readers)
        workers = start(plan.workers) or readers
        buffer, model_pool = start(plan.buffer), start(plan.model_pool)
        evaluator = start(plan.evaluator)
        wait_all(started)
        if plan.restore is not None:
            restore_snapshots(model_pool, RunDir.open(plan.restore[0]), plan.restore[1])
    except BaseException:
        stop_started(started)
        raise
    return Services(buffer, model_pool, learners, inference, workers, plan.batches, league,
                    evaluator, readers if plan.mixed else None, plan.fixed_batch, custom,
                    {name for name, s in cfg.services.custom.items() if s.restart})


def plan_run(cfg: TrainConfig, run: RunInfo) -> RunPlan:
    """What the run launches, checked before anything starts: a league's players, or a single
    policy as a league of one (no league service)."""
    check_supported(cfg)
    return league_plan(cfg, run) if cfg.league is not None else single_plan(cfg, run)
