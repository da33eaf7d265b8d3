"""``[services.custom.NAME]``: a user's own service, a class with ``@register`` methods in a
script, launched, placed, supervised and stopped like msagent's own, and reached by ``NAME``
with ``Solver().retrieve``."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator, model_validator

from msagent.config.base import Section
from msagent.config.general import _base_dir, resolve_script
from msagent.errors import ScriptError
from msagent.runtime.backend import Resources
from msagent.runtime.spec import registered_methods
from msagent.script_loader import load_script


class ResourcesSection(Section):
    """Per-instance resources (Ray actor options; ignored in local mode). Unset keys keep
    :class:`msagent.runtime.Resources`' defaults.
    """

    num_cpus: float | None = Field(None, ge=0)
    num_gpus: float | None = Field(None, ge=0)
    memory_mb: int | None = Field(None, ge=1)
    custom: dict[str, float] | None = None
    spread: bool | None = None

    def to_resources(self) -> Resources:
        """Build the runtime's Resources from the keys that were set, so defaults live there."""
        return Resources(**self.model_dump(exclude_none=True))


class CustomServiceSection(Section):
    """One user service.

    Attributes:
        script: The file defining the class (relative to the TOML, like every script).
        class_name: The class (``class = "Curriculum"`` in the TOML); its ``@register``
            methods are the service's calls.
        num: Instances (each call goes to one of them).
        settings: Keyword arguments of the class's constructor.
        restart: Replace a dead instance (a service that may lose its state); false: its
            death stops the run, naming it, as a learner's does.
        max_restarts: Replacements allowed over the run (with ``restart``).
    """

    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True,
                              populate_by_name=True)

    script: str
    class_name: str = Field(alias="class")
    num: int = Field(1, ge=1)
    settings: dict[str, Any] = Field(default_factory=dict)
    restart: bool = False
    max_restarts: int = Field(20, ge=0)
    resources: ResourcesSection = Field(default_factory=ResourcesSection)
    """Per-instance resources, as every service's ``resources`` table."""

    @field_validator("script")
    @classmethod
    def _resolve(cls, value: str, info: ValidationInfo) -> str:
        """Make the path absolute (against the TOML's folder)."""
        return str(resolve_script(value, _base_dir(info.context)))

    @model_validator(mode="after")
    def _serves(self) -> CustomServiceSection:
        """The class exists and has ``@register`` methods (checked before anything starts)."""
        try:
            user_class(self.script, self.class_name)
        except ScriptError as exc:
            raise ValueError(str(exc)) from None
        return self


def user_class(script: str, name: str) -> type:
    """The class ``name`` of a user's service script, with its ``@register`` methods.

    Raises:
        ScriptError: no such class, or one without a ``@register`` method.
    """
    found = getattr(load_script(script), name, None)
    if not isinstance(found, type):
        raise ScriptError(f"user service script {script} must define a class {name} (the "
                          "class named by its [services.custom] table)")
    if not registered_methods(found):
        raise ScriptError(f"class {name} in {script} has no @register methods: nothing to "
                          "serve (from msagent import register)")
    return found
