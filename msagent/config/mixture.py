"""The ``[league.mixture]`` table: the league's answer as a mixture of its snapshots.

Example::

    [league.mixture]
    every_s = 10        # solve again at most this often (0: never)
    solver = "nash"     # or prd, alpharank, uniform, last, regret
    max_members = 100   # the newest snapshots in the meta-game

On a small two-seat sequential OpenSpiel game the driver computes the exact meta-game among
the league's snapshots, solves it, and measures the mixture's NashConv beside the main
agent's (``nash_conv/league``); the mixture is kept in the league's state and checkpoints.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from msagent.config.base import Section


class MixtureSection(Section):
    """``[league.mixture]``: how often and by which meta-solver the league's snapshots are
    mixed into its answer.

    Attributes:
        every_s: Least time between two solves (0: the mixture is not computed).
        solver: A registered meta-solver (``nash`` for two-player zero-sum games).
        max_members: The newest this many snapshots make the meta-game (each new one costs
            two exact entries per member).
    """

    every_s: float = Field(10.0, ge=0)
    solver: str = "nash"
    max_members: int = Field(100, ge=1)

    @field_validator("solver")
    @classmethod
    def _known_solver(cls, value: str) -> str:
        """A registered meta-solver's name."""
        from msagent.psro.meta_solvers import SOLVERS

        if value in SOLVERS:
            return value
        raise ValueError(f"unknown meta-solver {value!r}; expected one of {sorted(SOLVERS)}")
