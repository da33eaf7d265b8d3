"""Sides of a game whose seats form teams (e.g. several controlled players per side in
Google Research Football).

A game may say which side each seat plays on with a ``teams`` attribute (seat -> side index,
sides numbered from 0); without one every seat is its own side. The league makes matches
between sides; an env worker seats every seat of a side with the side's policy, and a game's
outcome is decided between sides.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from msagent.errors import ScriptError
from msagent.vocabulary import Match


def teams_of(env: Any) -> tuple[int, ...]:
    """The side of each seat of ``env``: its ``teams``, or one side per seat.

    Raises:
        ScriptError: ``teams`` does not give every seat a side, or leaves a side empty.
    """
    seats = len(env.seats)
    teams = getattr(env, "teams", None)
    if teams is None:
        return tuple(range(seats))
    teams = tuple(int(t) for t in teams)
    if len(teams) != seats or set(teams) != set(range(max(teams, default=-1) + 1)):
        raise ScriptError(f"the game's teams {teams} must give each of its {seats} seats "
                          f"{list(env.seats)} a side numbered 0, 1, ... with no side empty")
    return teams


def num_sides(env: Any) -> int:
    """How many sides a match of ``env`` seats: its teams, or its seats."""
    return max(teams_of(env)) + 1


def seat_match(match: Match, teams: tuple[int, ...]) -> Match:
    """The seat-level match of a side-level one: every seat plays its side's policy, and the
    learner's first seat is the learner seat.

    Raises:
        ValueError: the match names a different number of sides than the game has.
    """
    sides = max(teams) + 1
    if len(match.seats) != sides:
        raise ValueError(f"a match for {len(match.seats)} sides was handed to a game with "
                         f"{sides} sides (teams {teams})")
    if teams == tuple(range(len(teams))):
        return match
    seats = tuple(match.seats[side] for side in teams)
    return Match(seats, teams.index(match.learner_seat), match.fixed_seats)


def side_returns(returns: np.ndarray, teams: tuple[int, ...]) -> np.ndarray:
    """Each side's return: the mean over its seats (equal when a side shares its reward)."""
    sides = np.asarray(teams)
    return np.array([returns[sides == side].mean() for side in range(max(teams) + 1)])
