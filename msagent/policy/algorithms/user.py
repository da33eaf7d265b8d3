"""A user's own learning algorithm from a script (``[algorithm] script = "my_algo.py"``).

The script defines ``make_algorithm(policy, config) -> Algorithm`` and may declare its settings
as ``Settings`` (a pydantic model or a dataclass): the ``[algorithm.settings]`` table is
validated against it when the config loads (in the driver, before anything starts) and again
in each learner, which builds the algorithm in its own process (no user code is pickled).
Without ``Settings``, ``config`` is the table as a plain dict.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from msagent.errors import ConfigError, ScriptError
from msagent.policy.algorithms.base import Algorithm
from msagent.policy.policy import Policy
from msagent.script_loader import load_script, script_function

MAKE = "make_algorithm"
"""The function an algorithm script defines."""
SETTINGS = "Settings"
"""The optional settings class an algorithm script declares."""


def algorithm_settings(script: str, table: dict[str, Any]) -> Any:
    """The script's ``Settings`` built from ``table`` (the table itself without one).

    Raises:
        ConfigError: a key the settings do not know, or a value they refuse, named by key.
    """
    script_function(script, MAKE)  # a script without it is refused before anything starts
    model = getattr(load_script(script), SETTINGS, None)
    if model is None:
        return dict(table)
    if hasattr(model, "model_validate"):  # pydantic
        from pydantic import ValidationError

        try:
            return model.model_validate(table)
        except ValidationError as exc:
            raise ConfigError(_pydantic_lines(exc, script)) from None
    if dataclasses.is_dataclass(model):
        return _dataclass_settings(model, table, script)
    raise ScriptError(f"{SETTINGS} in {script} must be a pydantic model or a dataclass, "
                      f"got {type(model).__name__}")


def make_user_algorithm(script: str, table: dict[str, Any], policy: Policy) -> Algorithm:
    """Build the script's algorithm for ``policy``, checking what ``make_algorithm`` returns.

    Raises:
        ScriptError: the script has no ``make_algorithm``, or it returned something that is not
            an ``msagent.policy.algorithms.Algorithm``.
    """
    config = algorithm_settings(script, table)
    algorithm = script_function(script, MAKE)(policy, config)
    if not isinstance(algorithm, Algorithm):
        raise ScriptError(f"{MAKE}() in {script} must return an msagent Algorithm "
                          f"(msagent.policy.algorithms.Algorithm), got "
                          f"{type(algorithm).__name__}")
    if algorithm.policy is not policy:
        raise ScriptError(f"{MAKE}() in {script} must train the policy it was given "
                          "(algorithm.policy is another object): the learner publishes it")
    return algorithm


def _dataclass_settings(model: type, table: dict[str, Any], script: str) -> Any:
    """A dataclass built from the table, unknown keys named with the ones it knows."""
    known = {f.name for f in dataclasses.fields(model)}
    unknown = sorted(set(table) - known)
    if unknown:
        raise ConfigError(f"{unknown[0]}: not a setting of {SETTINGS} in {script} (it has "
                          f"{', '.join(sorted(known)) or 'none'})")
    try:
        return model(**table)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{exc} ({SETTINGS} in {script})") from None


def _pydantic_lines(exc: Any, script: str) -> str:
    """Every refused key with pydantic's reason, as the built-in tables say it."""
    found = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
    return "; ".join(found) + f" ({SETTINGS} in {script})"
