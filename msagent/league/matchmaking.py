"""Opponent sampling as pure functions: self-play, fictitious self-play, PFSP, a distribution.

PFSP (prioritized fictitious self-play, AlphaStar) weighs each candidate by a function of the
learner's win rate ``p`` against it; the weightings live in :data:`WEIGHTINGS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from msagent.vocabulary import PolicyId, PolicyRef

T = TypeVar("T")

Weighting = Callable[[np.ndarray, float], np.ndarray]
"""Maps win rates (and the ``pfsp_exponent``) to unnormalized weights."""


def _hard(p: np.ndarray, exponent: float) -> np.ndarray:
    """Focus on the opponents the learner loses to: ``(1 - p) ** exponent``."""
    return (1.0 - p) ** exponent


def _variance(p: np.ndarray, exponent: float) -> np.ndarray:
    """Focus on even opponents: ``p (1 - p)``."""
    return p * (1.0 - p)


def _linear(p: np.ndarray, exponent: float) -> np.ndarray:
    """Weight by the loss rate: ``1 - p``."""
    return 1.0 - p


def _linear_capped(p: np.ndarray, exponent: float) -> np.ndarray:
    """Weight by the loss rate, capped at one half: ``min(0.5, 1 - p)``."""
    return np.minimum(0.5, 1.0 - p)


WEIGHTINGS: dict[str, Weighting] = {
    "hard": _hard,
    "variance": _variance,
    "linear": _linear,
    "linear_capped": _linear_capped,
}
"""PFSP weightings by name."""


def check_weighting(name: str) -> str:
    """Return ``name`` if it is a known weighting, else raise ValueError listing them."""
    if name not in WEIGHTINGS:
        raise ValueError(f"unknown PFSP weighting {name!r}; known: {sorted(WEIGHTINGS)}")
    return name


def pfsp_weights(
    win_rates: np.ndarray, weighting: str = "hard", pfsp_exponent: float = 2.0
) -> np.ndarray:
    """Sampling probabilities from win rates; uniform when every weight is zero."""
    weights = WEIGHTINGS[check_weighting(weighting)](np.asarray(win_rates, float), pfsp_exponent)
    weights = np.clip(weights, 0.0, None)
    total = weights.sum()
    if weights.size == 0 or total <= 0:
        return np.full(weights.size, 1.0 / max(weights.size, 1))
    return weights / total


def self_play(player_id: PolicyId) -> PolicyRef:
    """The newest parameters of the player itself."""
    return PolicyRef.player(player_id)


def fictitious_self_play(candidates: Sequence[T], rng: np.random.Generator) -> T:
    """A candidate drawn uniformly (fictitious self-play over the history)."""
    return from_distribution(candidates, np.full(len(candidates), 1.0 / max(len(candidates), 1)),
                             rng)


def pfsp(
    candidates: Sequence[T], win_rates: np.ndarray, weighting: str, rng: np.random.Generator,
    pfsp_exponent: float = 2.0,
) -> T:
    """A candidate drawn with PFSP weights of the learner's win rates against them."""
    return from_distribution(candidates, pfsp_weights(win_rates, weighting, pfsp_exponent), rng)


def from_distribution(candidates: Sequence[T], probs: np.ndarray, rng: np.random.Generator) -> T:
    """A candidate drawn with the given probabilities (e.g. a PSRO meta-strategy)."""
    if not candidates:
        raise ValueError("no candidates to draw an opponent from")
    probs = np.asarray(probs, dtype=float)
    if probs.shape != (len(candidates),) or probs.min() < 0 or probs.sum() <= 0:
        raise ValueError(f"expected {len(candidates)} non-negative probabilities, got {probs}")
    return candidates[int(rng.choice(len(candidates), p=probs / probs.sum()))]
