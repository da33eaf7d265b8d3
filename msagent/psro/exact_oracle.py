"""PSRO's exact pieces for OpenSpiel games: tabular best responses, entries by tree
traversal, NashConv of the meta-strategy mixture.

A member is a tabular policy per seat it may sit in (every seat when the game is played
symmetrically, its own seat otherwise).
"""

from __future__ import annotations

import numpy as np

from msagent.psro import exact
from msagent.psro.game_tree import GameTree
from msagent.psro.loop import EntryResult, seat_weights
from msagent.psro.state import Entry, PSROState


class TabularMembers:
    """The population's tabular policies, by member id and seat."""

    def __init__(self, tree: GameTree) -> None:
        self.tree = tree
        self.policies: dict[str, dict[int, np.ndarray]] = {}

    def add(self, member: str, policies: dict[int, np.ndarray]) -> str:
        """Keep a member's policies (checked) under ``member``."""
        self.policies[member] = {s: exact.check_policy(self.tree, s, p)
                                 for s, p in policies.items()}
        return member

    def policy(self, member: str, seat: int) -> np.ndarray:
        """The member's policy for ``seat``."""
        return self.policies[member][seat]

    def mixture(self, state: PSROState, seat: int) -> np.ndarray:
        """The behavioural policy of ``seat``'s population mixed by the meta-strategy."""
        members = state.population_of(seat)
        return exact.mixture(self.tree, seat, [self.policy(m, seat) for m in members],
                             seat_weights(state, seat))

    def mixture_profile(self, state: PSROState) -> list[np.ndarray]:
        """The meta-strategy mixture, one tabular policy per seat."""
        return [self.mixture(state, s) for s in range(self.tree.num_players)]


def member_id(state: PSROState, population: int) -> str:
    """The id of the next member of ``population``: ``p<seat>_<k>``, or ``m_<k>``."""
    size = len(state.populations[population])
    return f"m_{size}" if state.symmetric else f"p{population}_{size}"


class ExactOracle:
    """Best responses computed exactly over information states (no training)."""

    episodes = 0

    def __init__(self, members: TabularMembers) -> None:
        self.members = members
        self.tree = members.tree

    def initial_members(self, state: PSROState) -> list[str]:
        """The uniform-random policy, as OpenSpiel's PSRO starts."""
        return [self._add(state, k, {s: exact.uniform_policy(self.tree, s)
                                     for s in self._seats(state, k)})
                for k in range(len(state.populations))]

    def best_responses(self, state: PSROState) -> list[str]:
        """Per population, a best response (in each of its seats) to the others' mixture."""
        mixed = self.members.mixture_profile(state)
        return [self._add(state, k, {s: exact.best_response(self.tree, mixed, s)[0]
                                     for s in self._seats(state, k)})
                for k in range(len(state.populations))]

    def _seats(self, state: PSROState, population: int) -> list[int]:
        """The seats a member of ``population`` sits in."""
        return list(range(state.num_players)) if state.symmetric else [population]

    def _add(self, state: PSROState, population: int, policies: dict[int, np.ndarray]) -> str:
        """Store a new member and return its id."""
        return self.members.add(member_id(state, population), policies)


class ExactEvaluator:
    """Entries as exact expected payoffs, by one pass over the tree each."""

    games = 0

    def __init__(self, members: TabularMembers) -> None:
        self.members = members

    def evaluate(self, state: PSROState, entries: list[Entry]) -> list[EntryResult]:
        """Expected payoffs of each entry's members, seat by seat."""
        return [EntryResult(exact.expected_returns(self.members.tree, self._profile(state, e)))
                for e in entries]

    def _profile(self, state: PSROState, entry: Entry) -> list[np.ndarray]:
        """The tabular profile an entry names."""
        return [self.members.policy(m, s) for s, m in enumerate(state.members(entry))]


def mixture_nash_conv(members: TabularMembers):
    """A NashConv function for :class:`~msagent.psro.loop.PSRO` over tabular members."""
    return lambda state: exact.nash_conv(members.tree, members.mixture_profile(state))
