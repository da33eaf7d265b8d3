"""The ``[league.psro]`` table: PSRO's meta-solver, oracle, budgets and stop criteria.

Example::

    [league.psro]
    solver = "nash"               # or prd, uniform, last, regret, alpharank, "my.py:solve"
    oracle = "exact"              # tabular best responses (OpenSpiel games)
    iterations = 50
    nash_conv = 0.01              # stop once the mixture's NashConv is at most this
    [league.psro.solver_params]   # keyword arguments of the solver
    iterations = 5000
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from msagent.config.base import Section
from msagent.script_loader import is_script_ref  # noqa: F401  (re-exported)

ORACLES = ("exact", "rl")
"""``exact``: tabular best responses over information states (OpenSpiel games);
``rl``: best responses trained with PPO through the league."""


class PSROSection(Section):
    """``[league.psro]``: turns a league run into PSRO.

    Attributes:
        solver: A meta-solver by name, or ``"script.py:function"`` (relative to the TOML's
            folder): a function from the payoff tensor to one distribution per population.
        solver_params: Keyword arguments of a named solver (e.g. ``iterations`` of ``prd``).
        oracle: ``exact`` (OpenSpiel games) or ``rl``.
        iterations: PSRO iterations to run (the initial population is iteration 0).
        nash_conv: Stop once NashConv is at most this (0 disables).
        symmetric: One population plays every seat (else one population per seat).
        episodes_per_br: RL oracle: training episodes of each best response.
        br_init: RL oracle: where each new best response starts: ``initial`` (the first
            member's parameters: every response from scratch) or ``newest`` (the response just
            frozen, so each one starts from a player that already knows the game).
        member_play: RL oracle: how frozen members act, in games, entries, NashConv and
            export: ``sample`` from their network's probabilities, or ``greedy``: the most
            likely legal action (a pure strategy, as an exact best response is).
        games_per_entry: Sampled meta-game entries: games per entry (the exact oracle
            computes entries by tree traversal and plays none).
        checkpoint_every: Iterations between checkpoints (one is also written at the end).
    """

    solver: str = "nash"
    solver_params: dict[str, Any] = Field(default_factory=dict)
    oracle: Literal["exact", "rl"] = "exact"
    iterations: int = Field(50, ge=0)
    nash_conv: float = Field(0.0, ge=0)
    symmetric: bool = False
    episodes_per_br: int = Field(20_000, ge=1)
    br_init: Literal["initial", "newest"] = "initial"
    member_play: Literal["sample", "greedy"] = "sample"
    games_per_entry: int = Field(200, ge=1)
    checkpoint_every: int = Field(5, ge=1)

    def coordinator_settings(self) -> Any:
        """The league coordinator's :class:`~msagent.psro.coordinator.PSROSettings`."""
        from msagent.psro.coordinator import PSROSettings

        return PSROSettings(self.solver, tuple(sorted(self.solver_params.items())),
                            self.iterations, self.episodes_per_br, self.games_per_entry,
                            self.symmetric, self.br_init)

    @field_validator("solver")
    @classmethod
    def _known_solver(cls, value: str) -> str:
        """A registered name, or ``file.py:function``."""
        from msagent.psro.meta_solvers import SOLVERS

        if value in SOLVERS or is_script_ref(value):
            return value
        raise ValueError(f"unknown meta-solver {value!r}; expected one of {sorted(SOLVERS)} "
                         "or 'script.py:function'")

    @model_validator(mode="after")
    def _greedy_needs_rl(self) -> PSROSection:
        """Greedy members are networks: the exact oracle's members are already pure."""
        if self.member_play == "greedy" and self.oracle != "rl":
            raise ValueError('member_play = "greedy" applies to oracle = "rl" (the exact '
                             "oracle's best responses already play one action each)")
        return self

