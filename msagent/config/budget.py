"""How long a best response trains (``msagent exploit --budget``, ``[services.exploiter]
budget``): env steps or wall-clock time."""

from __future__ import annotations

import re
from dataclasses import dataclass

from msagent.errors import UserError

_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|steps)?\s*$")
_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Budget:
    """A training budget: ``env_steps`` (0: none) or ``seconds`` (0: none), exactly one set."""

    env_steps: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        """``20000 steps`` or ``90 s``."""
        return f"{self.env_steps} steps" if self.env_steps else f"{self.seconds:g} s"

    def stop_table(self) -> dict[str, float]:
        """The ``[run.stop]`` keys that end training at the budget and at nothing else."""
        return {"env_steps": self.env_steps, "time_s": self.seconds, "mean_return": 0.0,
                "eval_win_rate": 0.0, "nash_conv": 0.0}


def parse_budget(text: str) -> Budget:
    """``20000`` or ``20000steps`` (env steps), ``90s``, ``10m``, ``1h`` (wall-clock).

    Raises:
        UserError: anything else, or a budget of 0.
    """
    found = _BUDGET.match(text)
    if not found or float(found.group(1)) <= 0:
        raise UserError(f"--budget {text!r}: expected env steps (20000 or 20000steps) or a "
                        "time (90s, 10m, 1h), more than 0")
    value, unit = float(found.group(1)), found.group(2) or "steps"
    if unit == "steps":
        if not value.is_integer():
            raise UserError(f"--budget {text!r}: env steps must be a whole number")
        return Budget(env_steps=int(value))
    return Budget(seconds=value * _SECONDS[unit])
