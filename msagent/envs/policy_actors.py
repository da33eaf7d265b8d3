"""Seat actors over trained policies (``msagent evaluate``): one policy, remembering between
its turns when recurrent; and a mixture, which at each game draws one of its members by the
weights of the seat it takes and plays it for the whole game (a league's mixture played as
the mixed strategy it is: one pure member per game)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from msagent.envs.play import SeatActor


def policy_actor(policy: Any, weights: dict[str, Any], deterministic: bool) -> SeatActor:
    """A seat actor acting with ``policy`` holding ``weights`` (remembering between its
    turns of a game when the policy is recurrent)."""
    policy.set_weights(weights)
    policy.invalidate_cache()
    return PolicyActor(policy, deterministic)


class PolicyActor:
    """A seat actor over a policy; a recurrent policy's state is kept from turn to turn and
    zeroed by ``reset`` (called at every game start)."""

    def __init__(self, policy: Any, deterministic: bool) -> None:
        self.policy, self.deterministic = policy, deterministic
        self.state: np.ndarray | None = None

    def reset(self) -> None:
        """A new game: forget the previous one."""
        self.state = None

    def __call__(self, obs: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
        """The actions of the seats this actor plays at this turn."""
        state = self.state if self.state is not None and len(self.state) == len(obs) else None
        out = self.policy.act(obs, masks, self.deterministic, state=state)
        self.state = out.state
        return out.actions


class MixedActor:
    """Plays ``members[k]`` in a game where it holds seat ``s``, drawn with ``weights[s][k]``.

    Args:
        members: The members' seat actors (each a ``SeatActor``).
        weights: One weight per member for each seat (non-negative, not all zero).
        seed: Seed of the draws.
    """

    def __init__(self, members: Sequence[Any], weights: Sequence[Sequence[float]],
                 seed: int = 0) -> None:
        self.members = list(members)
        self.weights = [_distribution(w, len(self.members)) for w in weights]
        self.rng = np.random.default_rng(seed)
        self.current = self.members[0]

    def take_seat(self, seat: int) -> None:
        """A new game in ``seat``: draw the member that plays it (``play_game`` calls this)."""
        probs = self.weights[seat % len(self.weights)]
        self.current = self.members[int(self.rng.choice(len(self.members), p=probs))]
        getattr(self.current, "reset", lambda: None)()

    def __call__(self, obs: np.ndarray, masks: np.ndarray | None) -> np.ndarray:
        """The drawn member's actions."""
        return self.current(obs, masks)


def _distribution(weights: Sequence[float], n: int) -> np.ndarray:
    """Weights as probabilities over ``n`` members (ValueError when they cannot be)."""
    arr = np.asarray(weights, dtype=float)
    if arr.shape != (n,) or (arr < 0).any() or arr.sum() <= 0:
        raise ValueError(f"expected {n} non-negative weights, not all 0, got {list(weights)}")
    return arr / arr.sum()
