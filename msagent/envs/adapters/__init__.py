"""Turn what a user's ``make_env()`` returned into a :class:`MultiAgentEnv`.

Accepted: an object already speaking the protocol (returned as is), a Gymnasium env (one
seat), a PettingZoo ``AECEnv`` (turn-based) or ``ParallelEnv`` (simultaneous), an OpenSpiel
``pyspiel.Game``. PettingZoo and OpenSpiel are optional: they are imported only when the
object comes from them.
"""

from __future__ import annotations

from typing import Any

from msagent.envs.adapters.base import optional_import
from msagent.envs.multi_agent import MultiAgentEnv
from msagent.errors import ScriptError

ACCEPTED = ("an msagent MultiAgentEnv (with seats, reset and step returning Turn)",
            "a gymnasium.Env", "a PettingZoo AECEnv or ParallelEnv",
            "an OpenSpiel pyspiel.Game")
"""What ``as_multi_agent`` accepts, for error messages."""

GYM_ATTRIBUTES = ("observation_space", "action_space", "reset", "step")
"""What an object needs to be driven as a Gymnasium env."""


def as_multi_agent(obj: Any, *, label: str = "", seat_spaces: bool = False) -> MultiAgentEnv:
    """The multi-seat game of ``obj``; ``label`` names it in error messages.

    Args:
        obj: What ``make_env()`` returned.
        label: Names the game in error messages.
        seat_spaces: Accept a PettingZoo game whose seats observe or act in different spaces
            (each in the adapter's ``observation_spaces`` and ``action_spaces``): for
            ``PadObservations`` and ``PadSeats``, which make them one.

    Raises:
        ScriptError: ``obj`` is none of the accepted kinds (naming its type), or its seats
            differ in their spaces.
    """
    if isinstance(obj, type) or callable(obj) and not hasattr(obj, "step"):
        raise _not_called(obj, label)
    if isinstance(obj, MultiAgentEnv):
        return obj
    if _comes_from(obj, "pettingzoo"):
        return _pettingzoo(obj, label, seat_spaces)
    if _comes_from(obj, "pyspiel") and _is(obj, "pyspiel", "Game"):
        from msagent.envs.adapters.openspiel import OpenSpielAdapter

        return OpenSpielAdapter(obj, label)
    if _is_gym(obj):
        from msagent.envs.adapters.gymnasium import GymnasiumAdapter

        return GymnasiumAdapter(obj, label)
    raise _refuse(obj, label)


def _pettingzoo(obj: Any, label: str, seat_spaces: bool) -> MultiAgentEnv:
    """The AEC or Parallel adapter of a PettingZoo env."""
    if _is(obj, "pettingzoo.utils.env", "AECEnv"):
        from msagent.envs.adapters.pettingzoo import AECAdapter

        return AECAdapter(obj, label, seat_spaces)
    if _is(obj, "pettingzoo.utils.env", "ParallelEnv"):
        from msagent.envs.adapters.pettingzoo import ParallelAdapter

        return ParallelAdapter(obj, label, seat_spaces)
    raise _refuse(obj, label)


def _comes_from(obj: Any, package: str) -> bool:
    """Whether a class of ``obj``'s type (or a base) is defined in ``package``."""
    return any(cls.__module__.split(".")[0] == package for cls in type(obj).__mro__)


def _is(obj: Any, module: str, name: str) -> bool:
    """``isinstance(obj, module.name)``, importing the optional module."""
    return isinstance(obj, getattr(optional_import(module), name))


def _is_gym(obj: Any) -> bool:
    """A gymnasium.Env, or an object of the same shape."""
    import gymnasium as gym

    if isinstance(obj, gym.Env):
        return True
    shaped = all(hasattr(obj, a) for a in GYM_ATTRIBUTES)
    return shaped and not callable(obj.observation_space)  # PettingZoo-like: a method


def _not_called(obj: Any, label: str) -> ScriptError:
    """The error for a class or function returned instead of an env made with it."""
    name = getattr(obj, "__qualname__", type(obj).__name__)
    where = f"{label}: " if label else ""
    kind = "class" if isinstance(obj, type) else "function"
    return ScriptError(f"{where}make_env() returned the {kind} {name} itself, not an env; call "
                       f"it (return {name}(...)); msagent accepts {', '.join(ACCEPTED)}")


def _refuse(obj: Any, label: str) -> ScriptError:
    """The error for an object no adapter accepts."""
    kind = type(obj)
    name = kind.__qualname__ if kind.__module__ == "builtins" else (
        f"{kind.__module__}.{kind.__qualname__}")
    where = f"{label}: " if label else ""
    return ScriptError(f"{where}make_env() returned {name}, which msagent cannot play; it "
                       f"accepts {', '.join(ACCEPTED)}")


__all__ = ["ACCEPTED", "as_multi_agent"]
