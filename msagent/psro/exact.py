"""Exact tools on a :class:`GameTree`: expected payoffs, best responses, NashConv, mixtures.

A tabular policy for player ``p`` is an array of shape ``(len(tree.infostates[p]),
tree.num_actions)``: one row of action probabilities per information state, zero on illegal
actions. A profile is one such array per player.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from msagent.psro.game_tree import CHANCE, GameTree

Profile = Sequence[np.ndarray]
"""One tabular policy per player."""


def uniform_policy(tree: GameTree, player: int) -> np.ndarray:
    """The uniform-random tabular policy of ``player`` (a common first population member)."""
    legal = tree.legal[player].astype(float)
    return legal / legal.sum(axis=1, keepdims=True)


def check_policy(tree: GameTree, player: int, policy: np.ndarray) -> np.ndarray:
    """Return ``policy`` as float64 after checking its shape, sign, support and row sums."""
    policy = np.asarray(policy, dtype=float)
    want = tree.legal[player].shape
    if policy.shape != want:
        raise ValueError(f"player {player}'s policy has shape {policy.shape}, expected {want}")
    if not np.isfinite(policy).all() or policy.min() < -1e-9:
        raise ValueError(f"player {player}'s policy has negative or non-finite probabilities")
    if (policy[~tree.legal[player]] > 1e-9).any():
        raise ValueError(f"player {player}'s policy puts probability on illegal actions")
    if not np.allclose(policy.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError(f"player {player}'s policy rows do not sum to 1")
    return policy


def edge_probs(tree: GameTree, profile: Profile) -> np.ndarray:
    """Per node and column: the probability of taking that edge (policy or chance)."""
    probs = tree.chance_probs.copy()
    for p, policy in enumerate(profile):
        nodes = np.flatnonzero(tree.player == p)
        probs[nodes, :tree.num_actions] = policy[tree.infoset[nodes]]
    return probs


def reach(tree: GameTree, profile: Profile) -> np.ndarray:
    """Per node: each player's own reach probability, and chance's in the last column."""
    probs = edge_probs(tree, profile)
    out = np.ones((tree.num_nodes, tree.num_players + 1))
    for level in tree.levels:
        actor = tree.player[level.parent]
        actor = np.where(actor == CHANCE, tree.num_players, actor)
        row = out[level.parent].copy()
        row[np.arange(len(actor)), actor] *= probs[level.parent, level.column]
        out[level.child] = row
    return out


def values(tree: GameTree, profile: Profile) -> np.ndarray:
    """Per node: each player's expected return below it when everyone plays ``profile``."""
    probs = edge_probs(tree, profile)
    out = tree.returns.copy()
    for level in reversed(tree.levels):
        weighted = probs[level.parent, level.column][:, None] * out[level.child]
        out[level.parents] = np.add.reduceat(weighted, level.starts, axis=0)
    return out


def expected_returns(tree: GameTree, profile: Profile) -> np.ndarray:
    """Each player's expected return from the start under ``profile``."""
    return values(tree, profile)[0]


def best_response(tree: GameTree, profile: Profile, player: int) -> tuple[np.ndarray, float]:
    """A deterministic best response of ``player`` to the others in ``profile``, and its value.

    Bottom-up over levels: at the player's nodes, each action's value is summed over the
    histories of the information state, weighted by the others' and chance's reach; the best
    legal action (lowest on ties) is taken, and its value passed up.
    """
    probs = edge_probs(tree, profile)
    others = np.delete(reach(tree, profile), player, axis=1).prod(axis=1)
    rows, legal = tree.legal[player].shape[0], tree.legal[player]
    choice = np.zeros(rows, dtype=np.int64)
    out = tree.returns[:, player].copy()
    for level in reversed(tree.levels):
        mine = tree.player[level.parent] == player
        weighted = np.where(mine, 0.0, probs[level.parent, level.column]) * out[level.child]
        out[level.parents] = np.add.reduceat(weighted, level.starts)
        if mine.any():
            _choose(tree, level, mine, others, out, choice, player)
    policy = np.zeros((rows, tree.num_actions))
    policy[np.arange(rows), choice] = 1.0
    assert legal[np.arange(rows), choice].all()
    return policy, float(out[0])


def _choose(tree: GameTree, level, mine: np.ndarray, others: np.ndarray, out: np.ndarray,
            choice: np.ndarray, player: int) -> None:
    """Pick the best action of each of the player's information states at this level."""
    parent, child, column = level.parent[mine], level.child[mine], level.column[mine]
    infoset = tree.infoset[parent]
    q = np.zeros(tree.legal[player].shape)
    np.add.at(q, (infoset, column), others[parent] * out[child])
    q = np.where(tree.legal[player], q, -np.inf)
    touched = np.unique(infoset)
    choice[touched] = q[touched].argmax(axis=1)
    taken = column == choice[infoset]
    out[parent[taken]] = out[child[taken]]


def nash_conv(tree: GameTree, profile: Profile) -> float:
    """Sum over players of what a best response gains over ``profile`` (0 at a Nash)."""
    on_policy = expected_returns(tree, profile)
    gains = [best_response(tree, profile, p)[1] - on_policy[p] for p in range(tree.num_players)]
    return float(sum(gains))


def own_reach(tree: GameTree, player: int, policies: Sequence[np.ndarray]) -> np.ndarray:
    """Per information state and policy: the player's own probability of reaching it."""
    k = len(policies)
    stacked = np.stack(policies, axis=-1)
    node_reach = np.ones((tree.num_nodes, k))
    for level in tree.levels:
        factor = np.ones((len(level.parent), k))
        mine = tree.player[level.parent] == player
        infoset, column = tree.infoset[level.parent[mine]], level.column[mine]
        factor[mine] = stacked[infoset, column]
        node_reach[level.child] = node_reach[level.parent] * factor
    out = np.zeros((len(tree.infostates[player]), k))
    nodes = np.flatnonzero(tree.player == player)
    out[tree.infoset[nodes]] = node_reach[nodes]
    return out


def mixture(tree: GameTree, player: int, policies: Sequence[np.ndarray],
            weights: np.ndarray) -> np.ndarray:
    """The behavioural policy equal to playing ``policies[k]`` with probability ``weights[k]``.

    Each policy's action probabilities at an information state are weighted by its weight
    times the player's own reach under it (Kuhn's theorem); where no policy reaches a state,
    the plain weighted average is used.
    """
    weights = np.asarray(weights, dtype=float)
    if len(weights) != len(policies):
        raise ValueError(f"{len(policies)} policies but {len(weights)} weights")
    stacked = np.stack(policies, axis=-1)
    w = own_reach(tree, player, policies) * weights
    unreached = w.sum(axis=1) <= 0
    w[unreached] = weights
    mixed = (stacked * w[:, None, :]).sum(axis=-1)
    return mixed / mixed.sum(axis=1, keepdims=True)
