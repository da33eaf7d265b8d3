"""One env slot's learning trajectory, cut into fixed-length Fragments.

In a multi-seat game the learner seat acts only on its own turns, and what it earns between
two of its decisions (the opponent's reply, the end of the game) belongs to the earlier one. A
``Stream`` therefore keeps its newest decision *open*: the rewards that arrive go to it, and it
is closed by the seat's next decision or by the end of the game. T closed rows make a Fragment,
bootstrapped from the value of the decision that closed the last one. Rows are written into
preallocated ``[T, ...]`` columns, which become the Fragment's arrays as they are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from msagent.vocabulary import Fragment, ModelKey


class Stream:
    """Rows of one env slot's learner seat; ``take`` hands out the finished Fragments."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.rows = 0  # rows written in the current columns, the open one included
        self.open = False
        self.fragments: list[Fragment] = []
        self._cols: dict[str, Any] | None = None
        self._key: ModelKey | None = None  # the oldest key of the current rows
        self._latest = -1  # and the newest version

    def decide(self, obs: np.ndarray, action, logp: float, value: float,
               mask: np.ndarray | None, key: ModelKey, state: np.ndarray | None = None) -> None:
        """Record a new decision of the learner seat; it closes the previous open one.

        ``state`` is a recurrent policy's state before this decision: a Fragment keeps the one
        of its first row, so that the learner replays the fragment from it.
        """
        if self.open:
            self._close(terminated=False, truncated=False, final_value=0.0, bootstrap=value)
        if self._cols is None:
            self._cols = _columns(self.length, obs, action, mask)
            self._cols["initial_state"] = None if state is None else np.array(state, np.float32)
        self._write(self.rows, obs, action, logp, value, mask)
        self._key = key if self._key is None else min(self._key, key)
        self._latest = max(self._latest, key.version)
        self.rows += 1
        self.open = True

    def redecide(self, obs: np.ndarray, action, logp: float, value: float,
                 mask: np.ndarray | None, key: ModelKey, state: np.ndarray | None = None) -> None:
        """Replace the open decision (the same observation, decided again by newer weights)."""
        if self.open:
            self._write(self.rows - 1, obs, action, logp, value, mask)
            self._key = key if self.rows == 1 else min(self._key, key)
            self._latest = max(self._latest, key.version)

    def reward(self, reward: float) -> None:
        """Credit a reward to the open decision (ignored before the seat's first decision)."""
        if self.open:
            self._cols["rewards"][self.rows - 1] += reward

    def end(self, terminated: bool, final_value: float = 0.0) -> None:
        """The game ended: close the open decision as terminated or truncated."""
        if self.open:
            self._close(terminated, not terminated, final_value, bootstrap=0.0)

    def break_off(self) -> None:
        """The game broke off (its env raised): close the open decision as truncated, valued
        by its own estimate, since the state after it was never reached. Its rows are kept,
        so a fragment still ends at the same step (sync runs count one per env slot)."""
        if self.open:
            value = float(self._cols["values"][self.rows - 1])
            self._close(terminated=False, truncated=True, final_value=value, bootstrap=0.0)

    def take(self) -> list[Fragment]:
        """The Fragments finished since the last call."""
        done, self.fragments = self.fragments, []
        return done

    def _write(self, i: int, obs: np.ndarray, action, logp: float, value: float,
               mask: np.ndarray | None) -> None:
        """Row ``i``'s acting-time columns."""
        cols = self._cols
        cols["obs"][i], cols["actions"][i] = obs, action
        cols["logp"][i], cols["values"][i] = logp, value
        if mask is not None:
            cols["action_mask"][i] = mask

    def _close(self, terminated: bool, truncated: bool, final_value: float,
               bootstrap: float) -> None:
        """Close the open row; T closed rows become a Fragment bootstrapped by ``bootstrap``."""
        cols, i = self._cols, self.rows - 1
        cols["terminated"][i], cols["truncated"][i] = terminated, truncated
        cols["final_values"][i] = final_value
        self.open = False
        if self.rows == self.length:
            self.fragments.append(Fragment(**cols, bootstrap_value=float(bootstrap),
                                           policy=self._key, latest_version=self._latest))
            self._cols, self._key, self._latest, self.rows = None, None, -1, 0


def _columns(length: int, obs: np.ndarray, action: Any,
             mask: np.ndarray | None) -> dict[str, Any]:
    """Fresh ``[T, ...]`` columns shaped like the first row."""
    obs, action = np.asarray(obs), np.asarray(action)
    floats = ("logp", "values", "rewards", "final_values")
    cols: dict[str, Any] = {name: np.zeros(length, np.float32) for name in floats}
    cols["obs"] = np.zeros((length, *obs.shape), obs.dtype)
    cols["actions"] = np.zeros((length, *action.shape), action.dtype)
    cols["terminated"] = np.zeros(length, bool)
    cols["truncated"] = np.zeros(length, bool)
    cols["action_mask"] = None if mask is None else np.zeros((length, *np.shape(mask)), bool)
    return cols
