"""Finds the user's environment and agent through the script paths of the TOML file (as Kaiwu).

The env script defines ``make_env(**env_params)`` returning a Gymnasium env (or an object of
the same shape); the agent script defines ``make_policy(observation_space, action_space, seed)``
returning a ``msagent.policy.Policy``. Each service loads the scripts itself, in its own
process, so no user code is pickled between processes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from msagent.envs.adapters.gymnasium import masked_dict
from msagent.errors import ScriptError
from msagent.policy import Policy
from msagent.script_loader import load_script, script_function

__all__ = ["ENV_ATTRIBUTES", "build_policy", "check_env", "check_policy", "env_factory",
           "game_action_space", "game_factory", "load_script", "script_function"]

ENV_ATTRIBUTES = ("observation_space", "action_space", "reset", "step")
"""What msagent uses of the object ``make_env`` returns."""


def env_factory(env_script: str, env_params: dict[str, Any]) -> Callable[[], Any]:
    """A zero-argument function that builds one user environment."""
    make_env = script_function(env_script, "make_env")
    try:
        inspect.signature(make_env).bind(**env_params)
    except TypeError as exc:
        raise ScriptError(f"make_env() in {env_script} does not accept the [env] parameters "
                          f"{sorted(env_params)}: {exc}") from None
    except ValueError:  # no signature to check (a builtin): let the call tell
        pass
    return functools.partial(make_env, **env_params)


def game_factory(env_script: str, env_params: dict[str, Any]) -> Callable[[], Any]:
    """A zero-argument function that builds one user game as a ``MultiAgentEnv`` (a Gymnasium
    env becomes a one-seat game; PettingZoo and OpenSpiel games go through their adapters)."""
    from msagent.envs.adapters import as_multi_agent

    make = env_factory(env_script, env_params)
    return lambda: as_multi_agent(make(), label=env_script)


def game_action_space(env_script: str, env_params: dict[str, Any]) -> Any:
    """The action space of the user's game (one throwaway game), for the built-in random bot."""
    game = game_factory(env_script, env_params)()
    try:
        return game.action_space
    finally:
        getattr(game, "close", lambda: None)()


def check_env(env: Any, env_script: str) -> Any:
    """Refuse what ``make_env`` returned unless it has what msagent uses of an env.

    Raises:
        ScriptError: naming the missing attribute, the returned type and the script.
    """
    for name in ENV_ATTRIBUTES:
        if not hasattr(env, name):
            raise ScriptError(
                f"make_env() in {env_script} returned {_type_name(env)}, which has no "
                f"{name}; it must return a gymnasium.Env (or an object with "
                f"{', '.join(ENV_ATTRIBUTES)})")
    return env


def check_policy(policy: Any, agent_script: str) -> Policy:
    """Refuse what ``make_policy`` returned unless it is an ``msagent.policy.Policy``.

    Raises:
        ScriptError: naming the returned type and the script.
    """
    if not isinstance(policy, Policy):
        raise ScriptError(f"make_policy() in {agent_script} returned {_type_name(policy)}; "
                          "it must return an msagent.policy.Policy")
    return policy


def build_policy(env_script: str, agent_script: str, env_params: dict[str, Any],
                 seed: int | None = None) -> Policy:
    """The user's policy for the user's env: spaces are read from one throwaway env.

    Raises:
        ScriptError: a script misses its function, or returned the wrong kind of object.
    """
    env = _spaces_of(env_factory(env_script, env_params)(), env_script)
    try:
        spaces = env.observation_space, env.action_space
    finally:
        getattr(env, "close", lambda: None)()
    policy = script_function(agent_script, "make_policy")(*spaces, seed=seed)
    return _check_privileged(env, check_policy(policy, agent_script), agent_script)


def _check_privileged(env: Any, policy: Policy, agent_script: str) -> Policy:
    """The policy, unless the env hands out hidden information its actor would read: an
    env with ``own_size`` privileged observations needs ``actor_inputs = own_size``."""
    own = getattr(env, "own_size", None) if getattr(env, "privileged", False) else None
    if own is not None and policy.network.actor_inputs != own:
        raise ScriptError(f"{agent_script}: the env's observations carry other seats' hidden "
                          f"information after the seat's own {own} features, but the actor "
                          f"reads {policy.network.actor_inputs or 'all'} of them; use "
                          f"NetworkConfig(actor_inputs={own})")
    return policy


def _spaces_of(env: Any, env_script: str) -> Any:
    """The env itself when it is a Gymnasium-shaped env, else its multi-seat adapter (whose
    spaces are one seat's: PettingZoo and OpenSpiel games, and a Gymnasium env whose
    observations carry their action mask)."""
    if all(hasattr(env, name) for name in ENV_ATTRIBUTES) and \
            not callable(getattr(env, "observation_space")) and \
            not masked_dict(env.observation_space):
        return env
    from msagent.envs.adapters import as_multi_agent

    try:
        return as_multi_agent(env, label=env_script)
    except ScriptError:
        return check_env(env, env_script)  # names what a Gymnasium env lacks


def _type_name(value: Any) -> str:
    """``module.Class`` of a value (just ``Class`` for builtins and user scripts; ``None``)."""
    if value is None:
        return "None"
    kind = type(value)
    plain = kind.__module__ == "builtins" or kind.__module__.startswith("msagent_user_")
    return kind.__qualname__ if plain else f"{kind.__module__}.{kind.__qualname__}"
