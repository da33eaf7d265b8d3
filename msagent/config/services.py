"""The ``[services.*]`` tables: how many instances of each service run, and how they behave."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from msagent.buffer.config import TableConfig
from msagent.buffer.rate_limiter import RateLimiterConfig
from msagent.buffer.removers import REMOVER_KINDS
from msagent.buffer.samplers import SAMPLER_KINDS
from msagent.config.base import Section
from msagent.config.custom_services import CustomServiceSection, ResourcesSection
from msagent.config.exploiter import ExploiterSection
from msagent.credentials import redact
from msagent.errors import ConfigError
from msagent.vocabulary import DEVICE_PATTERN

_STORE_SCHEMES = ("redis://", "rediss://", "unix://")
"""Url schemes ``msagent.model_pool.stores.make_store`` builds a RedisStore for."""


class _Service(Section):
    """Fields every service table has."""

    num: int = Field(1, ge=0)
    """Instances of the service (``services.learner.num``: learners per player, one
    data-parallel group; a run has one buffer and one model pool)."""
    resources: ResourcesSection = Field(default_factory=ResourcesSection)
    """Where each instance runs on a Ray cluster (Ray actor options; ignored in local mode)."""


class EnvWorkerSection(_Service):
    """Env workers: each steps ``num_envs`` environments, shipping ``fragment_len``-step pieces."""

    num: int = Field(2, ge=0)
    num_envs: int = Field(32, ge=1)
    """Environments each worker steps together (one act, or one predict request, per step)."""
    fragment_len: int = Field(32, ge=1)
    """Steps of one seat's decisions per fragment shipped to the learner's table."""
    max_restarts: int = Field(20, ge=0)
    """Dead or failed workers replaced per run (0: a failure stops the run)."""
    games_per_draw: int = Field(32, ge=1)
    """League runs: consecutive games each opponent the league draws plays in a worker
    (seats alternating), so games started together share opponents: fewer, larger forward
    passes and LRU cache hits, with the league's opponent distribution unchanged."""
    restart_failed_envs: bool = True
    """A game whose env raises (a crashed game engine) is broken off, neither reported nor
    learnt from, and its env rebuilt; the worker goes on with its other games, and the error
    is counted (``env_errors``) and logged. A slot whose fresh envs break off 3 games in a
    row, or msagent's own errors (bad observations, illegal actions), still fail the worker.
    False: any env error fails the worker (which is then replaced, up to max_restarts)."""


class InferenceSection(_Service):
    """Action selection: a policy copy per env worker (``local``) or servers (``central``).

    Attributes:
        mode: ``local``: a policy copy in each env worker, refreshed through the parameter
            topic; ``central``: inference servers answer the env workers' batched ``predict``.
        max_restarts: Dead inference servers replaced per run (0: a death stops the run).
        batch: Most requests gathered into one predict call (central mode); 0: the env
            workers each server answers (each worker has one request in flight), so a batch
            is complete as soon as every worker asked.
        max_wait_ms: How long the first request of a batch waits for others (central mode).
            0: no waiting; requests that arrive while a batch runs form the next one. With a
            few CPU env workers that is faster (1.0 gave batches of 1.9 but ~15 % fewer env
            steps/s on 2 cores: lockstep batches leave the server idle while every worker
            steps, where single requests overlap one worker's stepping with another's
            inference); raise it when inference is costly per call (a GPU, many workers).
        cache_size: Frozen snapshots kept in each LRU policy cache (an inference server's,
            or a league env worker's with local inference); a league keeps its population's
            recent snapshots in reach with 32.
        device: Where the inference servers' policies run (central mode): ``cpu``, ``cuda``
            (``cuda:N``) or ``auto``, as SEED RL batches its actors' observations on an
            accelerator; raise ``batch`` and ``max_wait_ms`` so that each call is big.
    """

    mode: Literal["local", "central"] = "local"
    max_restarts: int = Field(20, ge=0)
    batch: int = Field(0, ge=0)
    max_wait_ms: float = Field(0.0, ge=0)
    cache_size: int = Field(32, ge=1)
    device: str = Field("cpu", pattern=DEVICE_PATTERN)

    @model_validator(mode="after")
    def _central_needs_servers(self) -> InferenceSection:
        """Refuse central inference without any server to answer, and a device for the
        servers when there are none (local acting stays on the CPU)."""
        if self.mode == "central" and self.num < 1:
            raise ValueError("mode = 'central' needs num >= 1 inference servers")
        if self.mode == "local" and self.device != "cpu":
            raise ValueError(f"device = {self.device!r} is where inference servers run: it "
                             "needs mode = 'central' (local acting, in each env worker, stays "
                             "on the CPU)")
        return self


class LearnerSection(_Service):
    """The learner: samples fragments, updates, publishes parameters and snapshots.

    Attributes:
        sync: True: actors only act with the newest version; False: asynchronous.
        max_policy_lag: Fragments older than this many versions are dropped (and counted).
        publish_every: Updates between parameter publishes.
        dump_model_every: Updates between model-pool snapshots (0: never).
        checkpoint_every_s: Seconds between run-directory checkpoints (0: never).
        collective_timeout_s: ``num > 1``: how long a learner of a group waits in a collective
            (its peers' gradients, agreements) before it fails naming the group.
        batch_fragments: Fragments per update (0: one per env slot that feeds the learner, one
            round of the env workers; in a league, the round of the player home in the most
            slots, for every player). Asynchronous learners only: in sync mode an update is
            exactly one round.
        queued_batches: Asynchronous learners: env workers wait before shipping to a table
            that holds this many of its learner's batches, so that acting does not outrun
            learning and the excess is not dropped as stale (None: ``max(1, max_policy_lag
            - 1)``; 0: never wait).
        device: Where the learner trains: ``cpu``, ``cuda`` (``cuda:N``) or ``auto`` (a GPU
            when torch sees one). Acting stays on the CPU. On a Ray cluster give the learner
            a GPU too: ``resources.num_gpus = 1``.
    """

    sync: bool = True
    max_policy_lag: int = Field(0, ge=0)
    publish_every: int = Field(1, ge=1)
    dump_model_every: int = Field(10, ge=0)
    checkpoint_every_s: float = Field(30.0, ge=0)
    collective_timeout_s: float = Field(120.0, gt=0)
    batch_fragments: int = Field(0, ge=0)
    queued_batches: int | None = Field(None, ge=0)
    device: str = Field("cpu", pattern=DEVICE_PATTERN)

    def check_batch(self) -> None:
        """Refuse a batch size or a queue in sync mode, where workers wait for the update a
        round makes (checked once a league has made its learners async).

        Raises:
            ValueError: ``batch_fragments`` or ``queued_batches`` is set and ``sync`` is true.
        """
        if self.sync and self.batch_fragments:
            raise ValueError(f"services.learner: batch_fragments = {self.batch_fragments} needs "
                             "sync = false: a sync learner updates on exactly one round of "
                             "fragments, and its workers wait for that update")
        if self.sync and self.queued_batches is not None:
            raise ValueError(f"services.learner: queued_batches = {self.queued_batches} needs "
                             "sync = false: sync workers wait for every new version instead")


class BufferSection(_Service):
    """The replay buffer's one table; the defaults make an on-policy FIFO queue (each fragment
    sampled once, oldest first), which is what PPO needs.

    Attributes:
        max_size: Capacity in fragments.
        sampler: One of ``msagent.buffer`` sampler kinds (uniform, prioritized, fifo, lifo).
        sampler_params: Keyword arguments of the sampler, e.g. ``{alpha = 0.6, beta = 0.4}``.
        remover: One of ``msagent.buffer`` remover kinds (fifo, lifo).
        max_times_sampled: Remove an item once drawn this many times (0: never).
        min_size_to_sample: Items needed before any sample proceeds.
        samples_per_insert: Target draws per inserted item (0: no ratio limiting).
        error_buffer: Tolerance around that ratio (0: the smallest safe one,
            ``max(1, samples_per_insert)``).
    """

    max_size: int = Field(4096, ge=1)
    sampler: str = "fifo"
    sampler_params: dict[str, float] = Field(default_factory=dict)
    remover: str = "fifo"
    max_times_sampled: int = Field(1, ge=0)
    min_size_to_sample: int = Field(1, ge=1)
    samples_per_insert: float = Field(0.0, ge=0)
    error_buffer: float = Field(0.0, ge=0)

    @field_validator("sampler")
    @classmethod
    def _known_sampler(cls, value: str) -> str:
        """Name the known sampler kinds when an unknown one is given."""
        return _known(value, SAMPLER_KINDS)

    @field_validator("remover")
    @classmethod
    def _known_remover(cls, value: str) -> str:
        """Name the known remover kinds when an unknown one is given."""
        return _known(value, REMOVER_KINDS)

    @model_validator(mode="after")
    def _builds(self) -> BufferSection:
        """Check the table itself accepts the combination (ratio, sizes, sampler params)."""
        try:
            self.table_config("check")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self

    def table_config(self, name: str, seed: int | None = None) -> TableConfig:
        """Build the buffer's TableConfig under ``name``, seeding its sampler with ``seed``."""
        return TableConfig(
            name=name,
            max_size=self.max_size,
            sampler=self.sampler,
            sampler_params=dict(self.sampler_params),
            remover=self.remover,
            max_times_sampled=self.max_times_sampled,
            rate_limiter=self.rate_limiter_config(),
            seed=seed,
        )

    def rate_limiter_config(self) -> RateLimiterConfig:
        """The rate limiter: min size only, or a sample/insert ratio when one is set."""
        if self.samples_per_insert == 0:
            return RateLimiterConfig(min_size_to_sample=self.min_size_to_sample)
        error = self.error_buffer or max(1.0, self.samples_per_insert)
        return RateLimiterConfig(self.min_size_to_sample, self.samples_per_insert, error)


class ModelPoolSection(_Service):
    """The model pool's store and pruning.

    Attributes:
        url: ``""`` (or ``"memory"``) for in-memory, else ``redis://host:port/db``.
        keep_last: Snapshots kept per policy (frozen ones always survive; 0: keep all).
        memory_mib: In memory, the most MiB of frozen snapshots' weights kept in memory; the
            least recently used beyond it go to files in the run directory's
            ``model_pool_spill/`` while the run lasts (0: all in memory; ignored for Redis).
    """

    url: str = ""
    keep_last: int = Field(10, ge=0)
    memory_mib: float = Field(1024, ge=0)

    @field_validator("url")
    @classmethod
    def _known_store(cls, value: str) -> str:
        """Accept only urls ``make_store`` understands, before any service starts."""
        if value.strip().lower() in ("", "memory") or value.startswith(_STORE_SCHEMES):
            return value
        raise ValueError(f"expected '' (in-memory) or a redis:// url, got {redact(value)!r}")

    def keep_last_or_none(self) -> int | None:
        """``keep_last`` as ``ModelPool`` takes it (None keeps everything)."""
        return self.keep_last or None


class EvaluatorSection(_Service):
    """League runs: games of a player's newest parameters against fixed opponents, written
    nowhere but the results (win rates against wall time; bots join the payoff table).

    Attributes:
        num: Evaluator instances (0: none).
        num_envs: Games each plays side by side.
        player: The player evaluated ("": the first player of ``[league]``).
        opponents: Participant ids (``"bot:random"``, ``"main:40"``); empty: every bot.
        deterministic: Take the most likely legal action instead of sampling.
        pause_s: Rest between rounds of 16 steps (evaluation takes little CPU from training).
        average_snapshots: Above 1, evaluate the mean of the player's newest this many league
            snapshots (parameter averaging) instead of its newest parameters.
        nash_conv_every_s: On a sequential OpenSpiel game of at most
            ``nash_conv_max_histories`` histories, measure the player's exact NashConv at most
            this often, when its version moved (0: never). With no opponents, the evaluator
            only does this.
        nash_conv_max_histories: Games with more histories get no live NashConv (the
            evaluator holds the whole tree: liar's dice, 295 thousand histories, takes about
            200 MiB; OpenSpiel's tic-tac-toe, 550 thousand, about 1.2 GiB).
        judge: A judge script (relative to the TOML's folder) that knows the value of every
            move in a small game's positions (``positions()``, see ``msagent.envs.judge``):
            the evaluator counts the share of positions in which the player's most likely
            move throws value away, per seat ("": none).
        judge_every_s: Least time between two such exams (each when the version moved).
        final_games: After a league run ends (not interrupted), play the player's saved
            weights this many games against each opponent, the player moving one seat each
            game, and report them per seat at the end (0: none).
        final_average: Above 1, that final evaluation (games and judge) plays the mean of
            the player's newest this many league snapshots instead of its saved weights: in a
            two-player zero-sum game self-play's last iterate swings between strategies while
            its average settles (stochastic weight averaging over snapshots).
    """

    num: int = Field(1, ge=0)
    num_envs: int = Field(8, ge=1)
    player: str = ""
    opponents: list[str] = Field(default_factory=list)
    deterministic: bool = True
    pause_s: float = Field(0.5, ge=0)
    average_snapshots: int = Field(1, ge=1)
    nash_conv_every_s: float = Field(30.0, ge=0)
    nash_conv_max_histories: int = Field(500_000, ge=1, le=2_000_000)
    judge: str = ""
    judge_every_s: float = Field(30.0, gt=0)
    final_games: int = Field(0, ge=0)
    final_average: int = Field(1, ge=1)


class LeagueServiceSection(Section):
    """League runs: where the one league coordinator runs (its ``resources``; always one)."""

    resources: ResourcesSection = Field(default_factory=ResourcesSection)


class ServicesSection(Section):
    """All service tables."""

    env_worker: EnvWorkerSection = Field(default_factory=EnvWorkerSection)
    inference: InferenceSection = Field(default_factory=InferenceSection)
    learner: LearnerSection = Field(default_factory=LearnerSection)
    buffer: BufferSection = Field(default_factory=BufferSection)
    model_pool: ModelPoolSection = Field(default_factory=ModelPoolSection)
    evaluator: EvaluatorSection = Field(default_factory=EvaluatorSection)
    league: LeagueServiceSection = Field(default_factory=LeagueServiceSection)
    exploiter: ExploiterSection = Field(default_factory=ExploiterSection)
    """``msagent exploit`` scheduled while the run trains (:mod:`msagent.config.exploiter`)."""
    custom: dict[str, CustomServiceSection] = Field(default_factory=dict)
    """The user's own services by name (``[services.custom.NAME]``)."""

    @field_validator("custom")
    @classmethod
    def _own_names(cls, value: dict[str, CustomServiceSection]) -> dict[str, CustomServiceSection]:
        """A user service may not take the name of one of msagent's own."""
        taken = sorted(set(value) & BUILT_IN_SERVICES)
        if taken:
            raise ValueError(f"{taken[0]!r} is the name of one of msagent's services; name "
                             "yours otherwise")
        return value


BUILT_IN_SERVICES = frozenset({
    "EnvWorker", "InferenceServer", "ReplayBufferService", "ModelPoolService", "LeagueService",
    "Evaluator", "MetaEvaluator", "StoreReader", "Learner"})
"""Names msagent's own services register under (a user service must not take one)."""


def _known(value: str, kinds: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``kinds``, else fail listing them."""
    if value not in kinds:
        raise ValueError(f"expected one of {list(kinds)}, got {value!r}")
    return value
