"""Importing a user's script by its path (env, agent, bot, judge scripts): a foundation every
layer may use, apart from ``user_scripts``, which builds envs and policies from the scripts."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from msagent.errors import ConfigError, ScriptError


@functools.lru_cache(maxsize=None)
def load_script(path: str) -> ModuleType:
    """Import a user script by path once per process (a unique module name per path)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"user script {path!r} does not exist")
    name = f"msagent_user_{file.stem}_{hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"user script {path!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def is_script_ref(value: str) -> bool:
    """Whether ``value`` reads ``something.py:name`` (a user's meta-solver, role class...)."""
    path, _, name = value.rpartition(":")
    return path.endswith(".py") and name.isidentifier()


def script_function(path: str, name: str) -> Callable[..., Any]:
    """The function ``name`` of a user script, or a clear error saying what is missing.

    Raises:
        ScriptError: the script defines no callable ``name``.
    """
    func = getattr(load_script(path), name, None)
    if not callable(func):
        raise ScriptError(f"user script {path!r} must define a function {name}(); "
                          "see the README section 'Your environment and your agent'")
    return func
