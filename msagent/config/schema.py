"""``TrainConfig``: one TOML file describing one training run, validated strictly.

Every table and key has a default except ``[scripts]``, so the smallest valid file is::

    [scripts]
    env = "my_env.py"
    agent = "my_agent.py"
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from msagent.buffer.config import TableConfig
from msagent.config.algorithm import (AlgorithmSection, NONE_WORD, NULLABLE, anneal_over,
                                      player_keys)
from msagent.config.base import Section
from msagent.config.data import DataSection, PublishSection
from msagent.config.general import (CallbacksSection, LoggingSection, RunSection,
                                    ScriptsSection, StopSection, _base_dir, resolve_script)
from msagent.config.league import LeaguePlayerSection, LeagueSection
from msagent.config.messages import describe
from msagent.league.roles import check_role
from msagent.script_loader import is_script_ref
from msagent.vocabulary import BUILTIN_RANDOM
from msagent.config.services import (
    BufferSection,
    EnvWorkerSection,
    InferenceSection,
    LearnerSection,
    ModelPoolSection,
    ResourcesSection,
    ServicesSection,
)
from msagent.algorithm_config import PPOConfig

DEFAULT_TABLE = "fragments"
"""Name of the replay-buffer table :meth:`TrainConfig.table_config` builds by default."""

ASYNC_MAX_POLICY_LAG = 3
"""``services.learner.max_policy_lag`` of an async run (a league's, or ``sync = false``) that
does not set it (as the examples)."""


class TrainConfig(Section):
    """A whole training run: ``[run]``, ``[scripts]``, ``[env]``, ``[services.*]``,
    ``[algorithm]`` and ``[logging]``.

    Attributes:
        run: Name, seed, mode and stop criteria.
        scripts: The user's env and agent files (absolute paths once loaded).
        env: Free-form keyword arguments of ``make_env``.
        services: Instance counts and settings of each service.
        algorithm: PPO hyperparameters (only the keys that were set).
        logging: Progress display and TensorBoard.
    """

    run: RunSection = Field(default_factory=RunSection)
    scripts: ScriptsSection
    env: dict[str, Any] = Field(default_factory=dict)
    services: ServicesSection = Field(default_factory=ServicesSection)
    algorithm: AlgorithmSection = Field(  # type: ignore[valid-type]
        default_factory=AlgorithmSection
    )
    logging: LoggingSection = Field(default_factory=LoggingSection)
    league: LeagueSection | None = None
    """A ``[league]`` table turns the run into league training (several trainable players)."""
    data: DataSection = Field(default_factory=DataSection)
    """Where the learner's fragments come from: env workers, stored uploads, or both."""
    publish: PublishSection = Field(default_factory=PublishSection)
    """Publishing the acting policy as ONNX for game clients."""
    callbacks: CallbacksSection = Field(default_factory=CallbacksSection)
    """Your hooks: functions run at each update, snapshot, match, evaluation, checkpoint."""

    @field_validator("data", "publish")
    @classmethod
    def _resolve_stores(cls, value: DataSection | PublishSection,
                        info: ValidationInfo) -> DataSection | PublishSection:
        """Make local store paths absolute (against the TOML's folder); URIs stay as given."""
        name = "store" if isinstance(value, DataSection) else "models"
        path = getattr(value, name)
        if path and "://" not in path:
            setattr(value, name, str((_base_dir(info.context) / path).expanduser().resolve()))
        return value

    @field_validator("services")
    @classmethod
    def _resolve_judge(cls, value: ServicesSection, info: ValidationInfo) -> ServicesSection:
        """Make the evaluator's judge script absolute (against the TOML's folder)."""
        if value.evaluator.judge:
            value.evaluator.judge = str(resolve_script(value.evaluator.judge,
                                                       _base_dir(info.context)))
        return value

    @field_validator("league")
    @classmethod
    def _resolve_bots(cls, value: LeagueSection | None,
                      info: ValidationInfo) -> LeagueSection | None:
        """Make bot script paths absolute (against the TOML's folder), insisting they exist."""
        if value is not None:
            base = _base_dir(info.context)
            value.bots = {name: path if path == BUILTIN_RANDOM else str(resolve_script(path, base))
                          for name, path in value.bots.items()}
            for entry in value.players:  # a user's role class: its script found the same way
                if is_script_ref(entry.role):
                    entry.role = _resolved_ref(entry.role, base)
                    check_role(entry.role)
                if entry.agent is not None:
                    entry.agent = str(resolve_script(entry.agent, base))
            if value.psro is not None and is_script_ref(value.psro.solver):
                value.psro.solver = _resolved_ref(value.psro.solver, base)
            if isinstance(info.data.get("algorithm"), AlgorithmSection):  # else: its own error
                _check_player_algorithms(value, info.data["algorithm"], info)
            if isinstance(info.data.get("services"), ServicesSection):
                for entry in value.players:
                    _player_buffer(entry.id, info.data["services"].buffer, entry.buffer)
        return value

    @model_validator(mode="before")
    @classmethod
    def _anneal_over_the_run(cls, data: Any) -> Any:
        """``anneal_lr`` with neither ``total_updates`` nor ``anneal_s`` decays over the run's
        ``run.stop.time_s`` (:func:`anneal_over`)."""
        if not isinstance(data, dict) or not isinstance(data.get("algorithm"), dict):
            return data
        return {**data, "algorithm": anneal_over(data["algorithm"], _time_s(data))}

    @model_validator(mode="after")
    def _league_learners_async(self) -> TrainConfig:
        """A league's learners update on their own: ``sync`` defaults to false there. An
        async learner's ``max_policy_lag`` defaults to a few versions (0 would drop nearly
        every fragment); values the config sets are kept (and a league's ``sync = true`` is
        refused with its reason later)."""
        learner = self.services.learner
        if self.league is not None and "sync" not in learner.model_fields_set:
            learner.sync = False
        if not learner.sync and "max_policy_lag" not in learner.model_fields_set:
            learner.max_policy_lag = ASYNC_MAX_POLICY_LAG
        learner.check_batch()
        return self

    def ppo_config(self) -> PPOConfig:
        """PPO's hyperparameters: the ``[algorithm]`` keys set, ``seed`` from ``run.seed``."""
        return self.algorithm.ppo_config(seed=self.run.seed)

    def _entry(self, player: str) -> LeaguePlayerSection | None:
        """The ``[[league.players]]`` entry of ``player`` (None: no league, or PSRO's)."""
        return self.league.entry_of(player) if self.league is not None else None

    def agent_of(self, player: str) -> Path:
        """A league player's agent script (its network): its entry's ``agent``, a frozen
        owner's ``[league] frozen_agents`` entry, else ``[scripts] agent`` (also for PSRO's
        players and a single-policy run)."""
        entry = self._entry(player)
        if entry is None and self.league is not None and player in self.league.frozen_agents:
            return Path(self.league.frozen_agents[player])
        return Path(entry.agent) if entry is not None and entry.agent else self.scripts.agent

    def player_learner(self, player: str) -> LearnerSection:
        """A league player's learner settings: its entry's ``learner`` keys over
        ``[services.learner]``."""
        entry = self._entry(player)
        if entry is None or entry.learner is None:
            return self.services.learner
        return self.services.learner.model_copy(update=entry.learner.overrides())

    def player_buffer(self, player: str) -> BufferSection:
        """A league player's table settings: its entry's ``buffer`` keys over
        ``[services.buffer]``."""
        entry = self._entry(player)
        return _player_buffer(player, self.services.buffer, entry.buffer if entry else None)

    def player_table_config(self, player: str, name: str) -> TableConfig:
        """A league player's table, seeded from ``run.seed``."""
        return self.player_buffer(player).table_config(name, seed=self.run.seed)

    def player_algorithm(self, player: str) -> AlgorithmSection:
        """A league player's algorithm: its entry's own ``algorithm`` keys over
        ``[algorithm]`` (the run's table for players without any, and PSRO's)."""
        entry = self._entry(player)
        if entry is None or entry.algorithm is None:
            return self.algorithm
        return AlgorithmSection.model_validate(anneal_over(player_keys(
            self.algorithm.model_dump(exclude_unset=True), entry.algorithm),
            self.run.stop.time_s))

    def table_config(self, name: str = DEFAULT_TABLE) -> TableConfig:
        """The replay-buffer table ``[services.buffer]`` describes, seeded from ``run.seed``."""
        return self.services.buffer.table_config(name, seed=self.run.seed)

    def to_toml_dict(self) -> dict[str, Any]:
        """Plain nested data TOML can hold: no None, algorithm keys only where they were set."""
        data = _clean(self.model_dump(mode="python", exclude={"env", "algorithm"}))
        data["env"] = dict(self.env)  # free-form: passed to make_env exactly as given
        data["algorithm"] = self.algorithm.model_dump(exclude_unset=True)
        return {name: data[name] for name in type(self).model_fields
                if data.get(name) not in ({}, None)}


def _time_s(data: dict[str, Any]) -> Any:
    """``run.stop.time_s`` of raw config data (None when absent or not a table)."""
    stop = (data.get("run") or {}).get("stop") if isinstance(data.get("run"), dict) else None
    return stop.get("time_s") if isinstance(stop, dict) else None


def _player_buffer(player: str, run: BufferSection, own: dict[str, Any] | None) -> BufferSection:
    """The run's buffer table with a player's own keys laid over it (checked, naming the
    player); the buffer's ``num`` and ``resources`` stay the run's."""
    if not own:
        return run
    service = sorted({"num", "resources"} & set(own))
    if service:
        raise ValueError(f"league.players {player!r}: buffer.{service[0]}: one buffer service "
                         "holds every player's table; set it in [services.buffer]")
    return _validated(player, "buffer", BufferSection, {**run.model_dump(), **own})


def _validated(player: str, table: str, model: Any, data: dict[str, Any],
               context: Any = None) -> Any:
    """``model`` validated from a player's ``table`` keys; a failure becomes one line naming
    the player and each bad key (``league.players 'x': buffer.max_size: ...``)."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        found = describe(exc, model, "").splitlines()[1:]
        raise ValueError(f"league.players {player!r}: " + "; ".join(
            f"{table}." + line.strip() for line in found)) from None


def _check_player_algorithms(league: LeagueSection, run: AlgorithmSection,
                             info: ValidationInfo) -> None:
    """Validate each player's own ``algorithm`` keys over the run's, naming the player; a
    player's script path is made absolute (against the TOML's folder)."""
    time_s = info.data["run"].stop.time_s if "run" in info.data else None
    for entry in league.players:
        if entry.algorithm is None:
            continue
        keys = anneal_over(player_keys(run.model_dump(exclude_unset=True), entry.algorithm),
                           time_s)
        section = _validated(entry.id, "algorithm", AlgorithmSection, keys, info.context)
        if "script" in entry.algorithm:
            entry.algorithm = {**entry.algorithm, "script": section.script}


def _clean(value: Any) -> Any:
    """Drop None values and empty tables (TOML has no null; an absent key means the default),
    also inside arrays of tables (``[[league.players]]``)."""
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if not isinstance(value, dict):
        return value
    kept = {k: _clean(v) for k, v in value.items() if v is not None}
    return {k: v for k, v in kept.items() if v != {}}


__all__ = [
    "DEFAULT_TABLE", "NONE_WORD", "NULLABLE", "AlgorithmSection", "BufferSection",
    "CallbacksSection", "EnvWorkerSection", "InferenceSection", "LearnerSection", "LoggingSection",
    "ModelPoolSection", "ResourcesSection", "RunSection", "ScriptsSection", "ServicesSection",
    "StopSection", "TrainConfig",
]


def _resolved_ref(ref: str, base: Path) -> str:
    """``script.py:name`` with the script made absolute against the TOML's folder."""
    path, _, name = ref.rpartition(":")
    return f"{resolve_script(path, base)}:{name}"
