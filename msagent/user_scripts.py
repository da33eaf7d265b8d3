"""Finds the user's environment and agent through the script paths of the TOML file (as Kaiwu).

The env script defines ``make_env(**env_params)`` returning a Gymnasium env (or an object of
the same shape); the agent script defines ``make_policy(observation_space, action_space, seed)``
returning a ``msagent.policy.Policy``. Each service loads the scripts itself, in its own
process, so no user code is pickled between processes.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from msagent.errors import ConfigError


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


def script_function(path: str, name: str) -> Callable[..., Any]:
    """The function ``name`` of a user script, or a clear error saying what is missing."""
    func = getattr(load_script(path), name, None)
    if not callable(func):
        raise ConfigError(f"user script {path!r} must define a function {name}(); "
                          "see the README section 'Your environment and your agent'")
    return func


def env_factory(env_script: str, env_params: dict[str, Any]) -> Callable[[], Any]:
    """A zero-argument function that builds one user environment."""
    make_env = script_function(env_script, "make_env")
    return functools.partial(make_env, **env_params)


def build_policy(env_script: str, agent_script: str, env_params: dict[str, Any],
                 seed: int | None = None) -> Any:
    """The user's policy for the user's env: spaces are read from one throwaway env."""
    env = env_factory(env_script, env_params)()
    try:
        spaces = env.observation_space, env.action_space
    finally:
        env.close()
    return script_function(agent_script, "make_policy")(*spaces, seed=seed)
