"""Neural policies as tabular ones over an OpenSpiel game's information states, so the exact
tools can measure a mixture of trained networks (NashConv, export)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from msagent.envs.adapters.openspiel import INVALID_ACTION, OpenSpielAdapter
from msagent.psro import exact
from msagent.psro.game_tree import GameTree


class InfostateInputs:
    """What each seat observes at each of its information states, and the legal actions.

    Built once per game by replaying one history of every information state through the same
    adapter the env workers use, so the networks see exactly what they saw in training. With
    a privileged adapter the other seats' part comes from that one history, whichever it is:
    only a critic reads it, and tables are the actor's.
    """

    def __init__(self, game: Any, tree: GameTree,
                 adapter: OpenSpielAdapter | None = None) -> None:
        """Replay every information state once (``adapter``: the env workers' own, if not the
        default one)."""
        adapter = adapter or OpenSpielAdapter(game)
        self.obs: list[np.ndarray] = []
        for player, histories in enumerate(tree.histories):
            rows = [adapter.observe(_replay(game, h), player) for h in histories]
            self.obs.append(np.stack(rows) if rows else np.zeros((0,)))
        self.legal = tree.legal

    def table(self, policy: Any, player: int) -> np.ndarray:
        """The policy's action probabilities at every information state of ``player``."""
        probs = policy.action_probs(self.obs[player], self.legal[player])
        probs = np.where(self.legal[player], probs, 0.0)
        return probs / probs.sum(axis=1, keepdims=True)


def greedy_table(table: np.ndarray) -> np.ndarray:
    """The table's most likely action at each information state, with probability 1 (what a
    policy acting deterministically plays: the first of tied actions)."""
    return np.eye(table.shape[1])[table.argmax(axis=1)]


def _replay(game: Any, history: list[int]) -> Any:
    """The state of ``game`` reached by a history of its sequential form (the tree's): at a
    simultaneous node the acting seats' moves come one after another and are applied together,
    so a seat's information state maps to the simultaneous state before its move, which is
    what its network saw in training."""
    state, pending = game.new_initial_state(), []
    for action in history:
        if not state.is_simultaneous_node():
            state.apply_action(action)
            continue
        pending.append(action)
        acting = [p for p in range(game.num_players()) if state.legal_actions(p)]
        if len(pending) == len(acting):
            joint = dict(zip(acting, pending))
            state.apply_actions([joint.get(p, INVALID_ACTION) for p in range(game.num_players())])
            pending = []
    return state


class NetworkTables:
    """Population members (networks, by participant id) as tables over information states.

    Args:
        game: The sequential OpenSpiel game.
        policy: A policy of the game's shape, whose weights are swapped per member.
        pull: Member participant id -> weights (from the model pool).
        adapter: The adapter the env workers play the game through, when the env script made
            its own (e.g. with privileged observations).
        greedy: Members play their most likely action (``member_play = "greedy"``).
        policy_of: Member id -> the policy its weights load into, where members differ in
            network (league players with their own agent script); else ``policy`` serves all.
        max_nodes: Larger game trees are refused (ValueError; None: the exact tools' cap).
    """

    def __init__(self, game: Any, policy: Any, pull: Callable[[str], Any],
                 adapter: OpenSpielAdapter | None = None, greedy: bool = False,
                 policy_of: Callable[[str], Any] | None = None,
                 max_nodes: int | None = None) -> None:
        from msagent.psro.game_tree import MAX_NODES, build_tree

        self.game, self.tree = game, build_tree(game, max_nodes or MAX_NODES)
        self.inputs = InfostateInputs(game, self.tree, adapter)
        self.policy, self.pull, self.greedy = policy, pull, greedy
        self.policy_of = policy_of or (lambda member: self.policy)
        self.tables: dict[str, list[np.ndarray]] = {}

    def member(self, member: str) -> list[np.ndarray]:
        """One table per seat of a member's network (its weights pulled once)."""
        if member not in self.tables:
            policy = self.policy_of(member)
            policy.set_weights(self.pull(member))
            tables = [self.inputs.table(policy, s) for s in range(self.tree.num_players)]
            self.tables[member] = [greedy_table(t) for t in tables] if self.greedy else tables
        return self.tables[member]

    def entry(self, seats: Sequence[str]) -> np.ndarray:
        """Exact expected returns per seat with member ``seats[s]`` in seat ``s``."""
        profile = [self.member(m)[s] for s, m in enumerate(seats)]
        return exact.expected_returns(self.tree, profile)

    def mixture(self, populations: Sequence[Sequence[str]],
                metas: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Seat ``s`` plays ``populations[s]`` mixed by ``metas[s]``: one table per seat."""
        return [exact.mixture(self.tree, s, [self.member(m)[s] for m in populations[s]],
                              metas[s]) for s in range(self.tree.num_players)]

    def nash_conv(self, populations: Sequence[Sequence[str]],
                  metas: Sequence[np.ndarray]) -> float:
        """NashConv of the mixture."""
        return exact.nash_conv(self.tree, self.mixture(populations, metas))

    def br_gap(self, responses: Sequence[str], populations: Sequence[Sequence[str]],
               metas: Sequence[np.ndarray]) -> float:
        """How much an exact best response to the mixture gains over the trained ones, summed
        over seats (``responses[s]`` plays seat ``s``): 0 for a perfect RL oracle."""
        mix = self.mixture(populations, metas)
        gap = 0.0
        for seat, member in enumerate(responses):
            profile = list(mix)
            profile[seat] = self.member(member)[seat]
            got = exact.expected_returns(self.tree, profile)[seat]
            gap += exact.best_response(self.tree, mix, seat)[1] - float(got)
        return gap


def exact_tables_possible(game: Any) -> str | None:
    """None when the game allows exact tables (a sequential OpenSpiel game), else why not."""
    try:
        import pyspiel
    except ImportError:
        return "OpenSpiel is not installed"
    if not isinstance(game, pyspiel.Game):
        return "the game is not an OpenSpiel game"
    kind = game.get_type()
    if kind.dynamics not in (pyspiel.GameType.Dynamics.SEQUENTIAL,
                             pyspiel.GameType.Dynamics.SIMULTANEOUS):
        return f"the game's dynamics are {kind.dynamics}"
    if not kind.provides_information_state_string:
        return "the game has no information-state strings"
    return None


def exact_game_in(env: Any) -> tuple[Any, OpenSpielAdapter | None] | str:
    """The OpenSpiel game in what the user's ``make_env`` returned (or its adapter), and the
    adapter it is played through when there is one; or why exact tables are not possible."""
    adapter = env if isinstance(env, OpenSpielAdapter) else None
    game = adapter.game if adapter is not None else env
    why = exact_tables_possible(game)
    return (game, adapter) if why is None else why


def exact_game_of(env_script: str, env_params: dict[str, Any]
                  ) -> tuple[Any, OpenSpielAdapter | None] | str:
    """:func:`exact_game_in` of one env the user's script makes (closed when it is not one)."""
    from msagent.user_scripts import env_factory

    env = env_factory(env_script, env_params)()
    found = exact_game_in(env)
    if isinstance(found, str) and callable(getattr(env, "close", None)):
        env.close()
    return found


def tables_from_scripts(env_script: str, agent_script: str, env_params: dict[str, Any],
                        seed: int, pull: Callable[[str], Any],
                        greedy: bool = False) -> NetworkTables | str:
    """Members of the user's game as tables (``greedy``: their most likely actions), or why
    the game does not allow it (not a sequential OpenSpiel game, too large, information states
    of uneven depth...)."""
    from msagent.user_scripts import build_policy

    found = exact_game_of(env_script, env_params)
    if isinstance(found, str):
        return found
    game, adapter = found
    try:
        return NetworkTables(game, build_policy(env_script, agent_script, env_params, seed),
                             pull, adapter, greedy)
    except ValueError as exc:
        return str(exc)
