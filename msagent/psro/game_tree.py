"""An OpenSpiel game's whole tree as flat numpy arrays, built once.

Exact expected payoffs, best responses and NashConv are then a few numpy passes over levels
(one level per depth) instead of a recursive Python walk per call, as OpenSpiel's own Python
best response does. Hand-written because no library flattens an OpenSpiel tree into arrays.

Nodes are numbered level by level, so each edge goes from depth ``d`` to ``d + 1``; edges are
sorted by parent, which lets ``np.add.reduceat`` sum a node's children in one call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

CHANCE = -1
"""``player`` of a chance node."""
TERMINAL = -2
"""``player`` of a terminal node."""
MAX_NODES = 2_000_000
"""Trees larger than this are refused: the exact tools are meant for small games."""


class GameTooLargeError(ValueError):
    """The game tree has more nodes than the exact tools handle."""


@dataclass
class Level:
    """The edges leaving the nodes of one depth, sorted by parent.

    Attributes:
        parent: Parent node of each edge.
        child: Child node of each edge.
        column: The action (decision nodes) or outcome position (chance nodes) of each edge.
        starts: Offsets of each parent's first edge (for ``np.add.reduceat``).
        parents: The distinct parents, in the order of ``starts``.
    """

    parent: np.ndarray
    child: np.ndarray
    column: np.ndarray
    starts: np.ndarray
    parents: np.ndarray


@dataclass
class GameTree:
    """The flattened tree of a sequential OpenSpiel game.

    Attributes:
        game_name: The game's name as loaded.
        num_players: Players of the game.
        num_actions: Distinct actions of the game (the width of a tabular policy).
        player: Per node: the acting player, :data:`CHANCE` or :data:`TERMINAL`.
        infoset: Per node: index of its information state in its player's list (-1 otherwise).
        chance_probs: Per node and outcome position: chance probabilities (zero elsewhere).
        returns: Per node and player: terminal returns (zero at non-terminal nodes).
        levels: Edges by parent depth, shallowest first.
        infostates: Per player: information-state strings, in index order.
        legal: Per player: legal-action masks, one row per information state.
        histories: Per player: one history (action list) reaching each information state.
    """

    game_name: str
    num_players: int
    num_actions: int
    player: np.ndarray
    infoset: np.ndarray
    chance_probs: np.ndarray
    returns: np.ndarray
    levels: list[Level]
    infostates: list[list[str]]
    legal: list[np.ndarray]
    histories: list[list[list[int]]]

    @property
    def num_nodes(self) -> int:
        """How many histories (nodes) the tree has."""
        return len(self.player)

    def infostate_index(self, player: int) -> dict[str, int]:
        """Information-state string -> row, for one player."""
        return {key: i for i, key in enumerate(self.infostates[player])}


class _Builder:
    """Walks the game breadth first and collects the arrays of :class:`GameTree`."""

    def __init__(self, game: Any, max_nodes: int) -> None:
        self.game, self.max_nodes = game, max_nodes
        self.players = game.num_players()
        self.player: list[int] = []
        self.infoset: list[int] = []
        self.chance: list[list[tuple[int, float]]] = []
        self.returns: list[list[float]] = []
        self.edges: list[tuple[int, int, int]] = []
        self.depth: list[int] = []
        self.index: list[dict[str, int]] = [{} for _ in range(self.players)]
        self.legal: list[list[list[int]]] = [[] for _ in range(self.players)]
        self.histories: list[list[list[int]]] = [[] for _ in range(self.players)]
        self.infoset_depth: list[dict[int, int]] = [{} for _ in range(self.players)]

    def build(self) -> GameTree:
        """Breadth-first walk, then the arrays."""
        frontier = [self.game.new_initial_state()]
        depth = 0
        while frontier:
            first = len(self.player)
            for state in frontier:
                self._add(state, depth)
            frontier = self._expand(frontier, first)
            depth += 1
        return self._arrays()

    def _add(self, state: Any, depth: int) -> None:
        """Record one node."""
        if len(self.player) >= self.max_nodes:
            raise GameTooLargeError(
                f"{self.game} has more than {self.max_nodes:,} histories; the exact tools "
                "(tree payoffs, exact best response, NashConv) only handle small games")
        self.depth.append(depth)
        self.returns.append(list(state.returns()) if state.is_terminal() else [0.0] * self.players)
        if state.is_terminal():
            self._node(TERMINAL, -1, [])
        elif state.is_chance_node():
            self._node(CHANCE, -1, list(state.chance_outcomes()))
        else:
            self._decision(state, depth)

    def _node(self, player: int, infoset: int, chance: list[tuple[int, float]]) -> None:
        """Append the per-node fields."""
        self.player.append(player)
        self.infoset.append(infoset)
        self.chance.append(chance)

    def _decision(self, state: Any, depth: int) -> None:
        """A decision node: find or create its information state."""
        p = state.current_player()
        if p < 0:
            raise ValueError(f"{self.game} has simultaneous moves; load it through "
                             "pyspiel.convert_to_turn_based for the exact tools")
        key = state.information_state_string(p)
        row = self.index[p].setdefault(key, len(self.index[p]))
        if row == len(self.legal[p]):
            self.legal[p].append(list(state.legal_actions()))
            self.histories[p].append(list(state.history()))
            self.infoset_depth[p][row] = depth
        elif self.infoset_depth[p][row] != depth:
            raise ValueError(f"{self.game}: information state {key!r} spans histories of "
                             "different lengths; the exact tools need them equal")
        self._node(p, row, [])

    def _expand(self, frontier: list[Any], first: int) -> list[Any]:
        """Children of the frontier, with their edges."""
        children = []
        for offset, state in enumerate(frontier):
            node = first + offset
            if state.is_terminal():
                continue
            if state.is_chance_node():
                moves = [(col, a) for col, (a, _) in enumerate(self.chance[node])]
            else:
                moves = [(a, a) for a in state.legal_actions()]
            for col, action in moves:
                self.edges.append((node, first + len(frontier) + len(children), col))
                children.append(state.child(action))
        return children

    def _arrays(self) -> GameTree:
        """Pack the lists into a :class:`GameTree`."""
        n, width = len(self.player), max([self.game.num_distinct_actions()]
                                          + [len(c) for c in self.chance])
        chance_probs = np.zeros((n, width))
        for node, outcomes in enumerate(self.chance):
            chance_probs[node, :len(outcomes)] = [p for _, p in outcomes]
        legal = []
        for rows in self.legal:
            mask = np.zeros((len(rows), self.game.num_distinct_actions()), dtype=bool)
            for i, actions in enumerate(rows):
                mask[i, actions] = True
            legal.append(mask)
        return GameTree(
            self.game.get_type().short_name, self.players, self.game.num_distinct_actions(),
            np.array(self.player), np.array(self.infoset), chance_probs,
            np.array(self.returns, dtype=float), _levels(self.edges, np.array(self.depth)),
            [list(ix) for ix in self.index], legal, self.histories)


def _levels(edges: list[tuple[int, int, int]], depth: np.ndarray) -> list[Level]:
    """Group the edges by parent depth (they are already sorted by parent)."""
    if not edges:
        return []
    arr = np.array(edges, dtype=np.int64)
    parent_depth = depth[arr[:, 0]]
    levels = []
    for d in range(int(parent_depth.max()) + 1):
        part = arr[parent_depth == d]
        parents, starts = np.unique(part[:, 0], return_index=True)
        levels.append(Level(part[:, 0], part[:, 1], part[:, 2], starts, parents))
    return levels


def sequential_form(game: Any) -> Any:
    """The game the exact tools walk: a simultaneous game as OpenSpiel's turn-based form (each
    seat in turn, not seeing the others' choices of the same move), else the game itself; its
    string is what a tabular policy file names, for ``exploitability.nash_conv``."""
    import pyspiel

    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        return pyspiel.convert_to_turn_based(game)
    return game


def build_tree(game: Any, max_nodes: int = MAX_NODES) -> GameTree:
    """Flatten ``game`` (a ``pyspiel.Game`` or a game string) into a :class:`GameTree`."""
    import pyspiel

    if isinstance(game, str):
        game = pyspiel.load_game(game)
    kind = game.get_type()
    game = sequential_form(game)
    if not kind.provides_information_state_string:
        raise ValueError(f"{kind.short_name} has no information-state strings; the exact "
                         "tools key tabular policies by them")
    return _Builder(game, max_nodes).build()
