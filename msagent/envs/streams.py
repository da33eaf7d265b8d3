"""One env slot's learning trajectory, cut into fixed-length Fragments.

In a multi-seat game the learner seat acts only on its own turns, and what it earns between
two of its decisions (the opponent's reply, the end of the game) belongs to the earlier one. A
``Stream`` therefore keeps its newest decision *open*: the rewards that arrive go to it, and it
is closed by the seat's next decision or by the end of the game. T closed rows make a Fragment,
bootstrapped from the value of the decision that closed the last one.
"""

from __future__ import annotations

import numpy as np

from msagent.vocabulary import Fragment, ModelKey


class Stream:
    """Rows of one env slot's learner seat; ``fragments`` collects the finished Fragments."""

    def __init__(self, length: int) -> None:
        self.length = length
        self.rows: list[dict] = []
        self.open = False
        self.fragments: list[Fragment] = []
        self.last_key: ModelKey | None = None

    def decide(self, obs: np.ndarray, action, logp: float, value: float,
               mask: np.ndarray | None, key: ModelKey) -> None:
        """Record a new decision of the learner seat; it closes the previous open one."""
        if self.open:
            self._close(terminated=False, truncated=False, final_value=0.0, bootstrap=value)
        self.rows.append({"obs": obs, "actions": action, "logp": logp, "values": value,
                          "action_mask": mask, "key": key, "rewards": 0.0})
        self.open, self.last_key = True, key

    def redecide(self, obs: np.ndarray, action, logp: float, value: float,
                 mask: np.ndarray | None, key: ModelKey) -> None:
        """Replace the open decision (the same observation, decided again by newer weights)."""
        if self.open:
            self.rows[-1].update(obs=obs, actions=action, logp=logp, values=value,
                                 action_mask=mask, key=key)
            self.last_key = key

    def reward(self, reward: float) -> None:
        """Credit a reward to the open decision (ignored before the seat's first decision)."""
        if self.open:
            self.rows[-1]["rewards"] += float(reward)

    def end(self, terminated: bool, final_value: float = 0.0) -> None:
        """The game ended: close the open decision as terminated or truncated."""
        if self.open:
            self._close(terminated, not terminated, final_value, bootstrap=0.0)

    def _close(self, terminated: bool, truncated: bool, final_value: float,
               bootstrap: float) -> None:
        """Close the open row; T closed rows become a Fragment bootstrapped by ``bootstrap``."""
        row = self.rows[-1]
        row.update(terminated=terminated, truncated=truncated, final_values=final_value)
        self.open = False
        if len(self.rows) == self.length:
            self.fragments.append(_fragment(self.rows, bootstrap))
            self.rows = []

    def take(self) -> list[Fragment]:
        """The Fragments finished since the last call."""
        done, self.fragments = self.fragments, []
        return done


def _fragment(rows: list[dict], bootstrap: float) -> Fragment:
    """Stack T closed rows into a Fragment keyed by the oldest policy version that acted."""
    masks = [r["action_mask"] for r in rows]
    return Fragment(
        obs=np.stack([r["obs"] for r in rows]),
        actions=np.asarray([r["actions"] for r in rows]),
        logp=np.asarray([r["logp"] for r in rows], np.float32),
        values=np.asarray([r["values"] for r in rows], np.float32),
        rewards=np.asarray([r["rewards"] for r in rows], np.float32),
        terminated=np.asarray([r["terminated"] for r in rows], bool),
        truncated=np.asarray([r["truncated"] for r in rows], bool),
        final_values=np.asarray([r["final_values"] for r in rows], np.float32),
        bootstrap_value=float(bootstrap),
        policy=min(r["key"] for r in rows),
        action_mask=None if masks[0] is None else np.stack(masks),
    )
