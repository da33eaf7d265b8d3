"""NashConv of one trained policy playing every seat of a small sequential OpenSpiel game: the
exploitability a league run reports while it trains, and what ``msagent export --format
openspiel`` writes for a player."""

from __future__ import annotations

from typing import Any

import numpy as np

from msagent.psro import exact
from msagent.psro.game_tree import MAX_NODES, GameTree, build_tree
from msagent.psro.neural import InfostateInputs, exact_game_in, exact_game_of, greedy_table


class NashConvProbe:
    """A game's tree and the networks' inputs at each information state, built once; then
    any policy of the game's shape becomes a table and its NashConv.

    Args:
        game: The sequential OpenSpiel game.
        adapter: The adapter the env workers play it through, when the env script made its own.
        max_nodes: Larger trees are refused (ValueError).
    """

    def __init__(self, game: Any, adapter: Any = None, max_nodes: int = MAX_NODES) -> None:
        self.game = game
        self.tree: GameTree = build_tree(game, max_nodes)
        self.inputs = InfostateInputs(game, self.tree, adapter)

    @property
    def infostates(self) -> int:
        """Information states of every seat together."""
        return sum(len(names) for names in self.tree.infostates)

    def tables(self, policy: Any, greedy: bool = False) -> list[np.ndarray]:
        """One table per seat of ``policy`` (``greedy``: its most likely actions); ValueError
        for a policy that has no tables (recurrent, continuous)."""
        tables = [self.inputs.table(policy, s) for s in range(self.tree.num_players)]
        return [greedy_table(t) for t in tables] if greedy else tables

    def nash_conv(self, profile: list[np.ndarray]) -> float:
        """How much best responses gain against the profile, summed over seats."""
        return exact.nash_conv(self.tree, profile)

    def __call__(self, policy: Any, greedy: bool = False) -> float:
        """NashConv of ``policy`` in every seat."""
        return self.nash_conv(self.tables(policy, greedy))


def probe_for_scripts(env_script: str, env_params: dict[str, Any],
                      max_nodes: int = MAX_NODES) -> NashConvProbe | str:
    """The probe of the user's game, or why it has none (not a sequential OpenSpiel game,
    too large, uneven information states...)."""
    return _probe(exact_game_of(env_script, env_params), max_nodes)


def probe_for_game(game: Any, max_nodes: int = MAX_NODES) -> NashConvProbe | str:
    """The probe of a game built by ``game_factory`` (an adapter), or why it has none."""
    return _probe(exact_game_in(game), max_nodes)


def _probe(found: tuple[Any, Any] | str, max_nodes: int) -> NashConvProbe | str:
    """The probe of a found game, or why not."""
    if isinstance(found, str):
        return found
    try:
        return NashConvProbe(*found, max_nodes=max_nodes)
    except ValueError as exc:
        return str(exc)
