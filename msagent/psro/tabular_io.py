"""Tabular policies as JSON files anyone can check with OpenSpiel.

Format (``msagent-tabular-policy/1``)::

    {"format": "msagent-tabular-policy/1",
     "game": "leduc_poker()",                   # pyspiel.load_game() of this string
     "policy": {"<information-state string>": [[action, probability], ...], ...}}

The ``policy`` object is what OpenSpiel's ``TabularPolicy.to_dict()`` gives: one entry per
information state of every player, legal actions only. :func:`to_openspiel` loads it back
into a ``TabularPolicy`` for ``exploitability.nash_conv``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from msagent.psro.game_tree import GameTree
from msagent.rundir.atomic import atomic_write

FORMAT = "msagent-tabular-policy/1"


def policy_dict(tree: GameTree, profile: Sequence[np.ndarray]) -> dict[str, list[list[float]]]:
    """Information-state string -> ``[[action, probability], ...]`` over every player."""
    out: dict[str, list[list[float]]] = {}
    for player, policy in enumerate(profile):
        for row, key in enumerate(tree.infostates[player]):
            if key in out:
                raise ValueError(f"information state {key!r} is shared by two players; the "
                                 "flat format needs distinct strings")
            actions = np.flatnonzero(tree.legal[player][row])
            out[key] = [[int(a), float(policy[row, a])] for a in actions]
    return out


def profile_of(tree: GameTree, data: dict[str, Any]) -> list[np.ndarray]:
    """The inverse of :func:`policy_dict`: a policy file's data as one table per player over
    ``tree``'s information states (zeros off the listed actions)."""
    profile = []
    for player, keys in enumerate(tree.infostates):
        table = np.zeros(tree.legal[player].shape)
        for row, key in enumerate(keys):
            for action, prob in data["policy"][key]:
                table[row, int(action)] = prob
        profile.append(table)
    return profile


def write_policy(path: Path, game_string: str, tree: GameTree,
                 profile: Sequence[np.ndarray]) -> Path:
    """Write a profile as a tabular policy file (atomically)."""
    data = {"format": FORMAT, "game": game_string, "policy": policy_dict(tree, profile)}
    atomic_write(Path(path), json.dumps(data).encode("utf-8"))
    return Path(path)


def read_policy(path: Path) -> dict[str, Any]:
    """A tabular policy file, checked for its format marker."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} file")
    return data


def to_openspiel(data: dict[str, Any]) -> tuple[Any, Any]:
    """``(game, TabularPolicy)`` from a policy file's data, for OpenSpiel's own tools."""
    import pyspiel
    from open_spiel.python import policy as openspiel_policy

    game = pyspiel.load_game(data["game"])
    tabular = openspiel_policy.TabularPolicy(game)
    for key, pairs in data["policy"].items():
        probs = tabular.policy_for_key(key)
        probs[:] = 0.0
        for action, prob in pairs:
            probs[int(action)] = prob
    return game, tabular
