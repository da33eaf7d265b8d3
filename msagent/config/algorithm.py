"""The ``[algorithm]`` table: every PPOConfig field, optional, with PPOConfig's own defaults.

The table's fields are generated from :class:`msagent.policy.algorithms.ppo.PPOConfig`, so a
field added there is configurable here at once. Only keys present in the TOML reach PPOConfig;
the others keep its defaults. TOML has no null, so ``"none"`` sets a field PPOConfig allows to
be None (``max_grad_norm = "none"`` disables gradient clipping).
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal

from pydantic import Field, ValidationInfo, create_model, field_validator, model_serializer
from pydantic import model_validator

from msagent.config.base import Section
from msagent.config.general import _base_dir, resolve_script
from msagent.errors import ConfigError, MsagentError
from msagent.algorithm_config import PPOConfig
from msagent.algorithm_ranges import range_error

NONE_WORD = "none"
"""How a TOML file spells Python's None for the fields that accept it."""

_HINTS = typing.get_type_hints(PPOConfig)
NULLABLE = frozenset(n for n, hint in _HINTS.items() if type(None) in typing.get_args(hint))
"""PPOConfig fields whose value may be None."""


class _AlgorithmBase(Section):
    """Behaviour of the generated ``AlgorithmSection`` (its fields are PPOConfig's)."""

    name: Literal["ppo", "impala", "bc"] = "ppo"
    """``ppo`` (on-policy, GAE), ``impala`` (V-trace: for ``services.learner.sync = false`` and
    for stored experience) or ``bc`` (behaviour cloning of the data's actions)."""

    script: str | None = None
    """A user's algorithm: a script defining ``make_algorithm(policy, config) -> Algorithm``
    (relative to the TOML, like every script); its settings go in ``[algorithm.settings]``."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """The user algorithm's settings, validated by the ``Settings`` its script declares."""

    @field_validator("script")
    @classmethod
    def _resolve_script(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Make the script's path absolute (against the TOML's folder)."""
        return None if value is None else str(resolve_script(value, _base_dir(info.context)))

    @field_validator("settings")
    @classmethod
    def _user_settings(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Validate the table against the script's ``Settings`` before anything starts."""
        if "script" not in info.data:  # the script's own error is the one to read
            return value
        script = info.data["script"]
        if script is None:
            if value:
                raise ValueError("[algorithm.settings] is for a user algorithm: set "
                                 "algorithm.script too (the built-in ones take their keys in "
                                 "[algorithm] itself)")
            return value
        from msagent.policy.algorithms.user import algorithm_settings

        try:
            algorithm_settings(script, value)
        except MsagentError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("*", mode="before")
    @classmethod
    def _none_word(cls, value: Any, info: ValidationInfo) -> Any:
        """Read ``"none"`` as None where PPOConfig accepts None."""
        if isinstance(value, str) and value.lower() == NONE_WORD and info.field_name in NULLABLE:
            return None
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _in_range(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse out-of-range values at their own key (``algorithm.lr: lr must be > 0 ...``)."""
        message = range_error(info.field_name, value)
        if message is not None:
            raise ValueError(message)
        return value

    @model_validator(mode="after")
    def _builds(self) -> _AlgorithmBase:
        """Let PPOConfig check the combination (e.g. ``anneal_lr`` needs ``total_updates``);
        a user algorithm takes none of the built-in keys."""
        if self.script is not None:
            builtin = sorted(self.model_fields_set - {"script", "settings"})
            if builtin:
                raise ValueError(f"{', '.join(builtin)}: with algorithm.script, the "
                                 "algorithm's own settings go in [algorithm.settings]")
            return self
        try:
            self.ppo_config()
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        """Write None back as ``"none"`` so dumped TOML reloads to the same config."""
        data = handler(self)
        return {k: NONE_WORD if v is None and k in NULLABLE else v for k, v in data.items()}

    def ppo_config(self, seed: int | None = None) -> PPOConfig:
        """Build PPOConfig from the keys that were set; ``seed`` fills ``seed`` if unset."""
        kwargs = {n: getattr(self, n) for n in self.model_fields_set if n in _HINTS}
        kwargs = {k: v for k, v in kwargs.items() if v is not None or k in NULLABLE}
        if seed is not None:
            kwargs.setdefault("seed", seed)
        return PPOConfig(**kwargs)


def _optional(hint: Any) -> Any:
    """``hint | None`` (None meaning "not set"), for a hint that may already allow None."""
    return hint if type(None) in typing.get_args(hint) else typing.Optional[hint]


def _ppo_fields() -> dict[str, Any]:
    """Pydantic field definitions mirroring PPOConfig, all optional and unset by default."""
    fields = dataclasses.fields(PPOConfig)
    doc = {f.name: f"PPOConfig.{f.name}, default {f.default!r}" for f in fields}
    return {n: (_optional(_HINTS[n]), Field(None, description=doc[n])) for n in doc}


AlgorithmSection = create_model(
    "AlgorithmSection",
    __base__=_AlgorithmBase,
    __doc__="The [algorithm] table: ``name`` plus every PPOConfig field, each optional.",
    **_ppo_fields(),
)


def anneal_over(algorithm: dict[str, Any], time_s: Any) -> dict[str, Any]:
    """``anneal_lr`` with neither ``total_updates`` nor ``anneal_s`` decays over the run's
    ``run.stop.time_s``, so a run made shorter or longer still ends its decay at its end."""
    if (algorithm.get("anneal_lr") is True and isinstance(time_s, (int, float))
            and time_s > 0 and not {"total_updates", "anneal_s"} & set(algorithm)):
        return {**algorithm, "anneal_s": float(time_s)}
    return algorithm


def player_keys(run: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """A league player's ``[algorithm]`` keys: its own over the run's, or its own alone when it
    names another algorithm (a ``name`` or ``script`` the run's table does not have)."""
    if any(k in own and own[k] != run.get(k) for k in ("name", "script")):
        return dict(own)
    settings = {**run.get("settings", {}), **own.get("settings", {})}
    return {**run, **own, **({"settings": settings} if settings else {})}
