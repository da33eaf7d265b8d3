"""A judge: a user script that knows the value of every move in a set of positions (a solver of
a small game), used to measure how often a player's own choice throws value away.

The script defines ``positions()``, an iterable of ``(seat, observation, action_mask,
move_values)``: the observation and legal-action mask the seat's policy is given, and the value
of each action for the player to move (larger is better; illegal actions are ignored). For
tic-tac-toe, a minimax over the whole game (``examples/tictactoe/bots/perfect_bot.py``).

A *losing move* is a chosen action worth less than the best legal one: a drawn position played
into a loss, a won one into a draw or a loss. :func:`examine` plays the policy greedily on every
position at once and counts them per seat, the share the league's main job reports beside its
win rates. The league never trains against a judge: it is a measure, not an opponent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from msagent.errors import ScriptError
from msagent.script_loader import load_script

TOLERANCE = 1e-9
"""Values closer than this to the best count as the best (float solvers)."""


@dataclass(frozen=True)
class Exam:
    """One seat's positions, stacked for one forward pass: observations, masks, and each
    position's action values with illegal actions at minus infinity."""

    observations: np.ndarray
    masks: np.ndarray
    values: np.ndarray

    def losing(self, actions: np.ndarray) -> int:
        """How many of ``actions`` (one per position) are worth less than the best."""
        chosen = self.values[np.arange(len(actions)), actions]
        return int((chosen < self.values.max(axis=1) - TOLERANCE).sum())


def load_exams(path: str) -> dict[int, Exam]:
    """The judge script's positions per seat (ScriptError names the script and what is wrong)."""
    module = load_script(path)
    if not callable(getattr(module, "positions", None)):
        raise ScriptError(f"judge {path}: defines no positions() (it must yield (seat, "
                          "observation, action_mask, move_values) for each position)")
    try:
        rows = list(module.positions())
    except Exception as exc:
        raise ScriptError(f"judge {path}: positions() raised {type(exc).__name__}: {exc}") \
            from exc
    if not rows:
        raise ScriptError(f"judge {path}: positions() yielded no position")
    by_seat: dict[int, list[Any]] = {}
    for row in rows:
        seat, observation, mask, values = _checked(path, row)
        by_seat.setdefault(seat, []).append((observation, mask, values))
    return {seat: _stacked(found) for seat, found in sorted(by_seat.items())}


def examine(policy: Any, exams: dict[int, Exam]) -> dict[int, dict[str, int]]:
    """Per seat: the positions and the losing moves of ``policy`` playing its most likely
    legal action in each."""
    out = {}
    for seat, exam in exams.items():
        acted = policy.act(exam.observations, exam.masks, True, values=False)
        actions = np.asarray(acted.actions).reshape(-1).astype(np.int64)
        out[seat] = {"positions": len(actions), "losing": exam.losing(actions)}
    return out


def _checked(path: str, row: Any) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """One position of the script, its parts as arrays (ScriptError if malformed)."""
    try:
        seat, observation, mask, values = row
        mask = np.asarray(mask, bool).reshape(-1)
        values = np.asarray(values, np.float64).reshape(-1)
        if values.shape != mask.shape or not mask.any() or int(seat) < 0:
            raise ValueError("a position needs one value per action and a legal action")
    except (TypeError, ValueError) as exc:
        raise ScriptError(f"judge {path}: a position is not (seat, observation, action_mask, "
                          f"move_values): {exc}") from None
    return int(seat), np.asarray(observation), mask, np.where(mask, values, -np.inf)


def _stacked(found: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Exam:
    """One seat's positions as stacked arrays."""
    observations, masks, values = zip(*found)
    return Exam(np.stack(observations), np.stack(masks), np.stack(values))
