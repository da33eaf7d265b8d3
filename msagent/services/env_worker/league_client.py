"""An env worker's side of the league: which player each env slot trains, the matches it plays
(prefetched from ``LeagueService`` in batches) and the results it reports back."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from msagent.envs.bots import load_bots
from msagent.envs.checks import ObsChecker
from msagent.envs.match_collector import MatchCollector
from msagent.envs.teams import num_sides
from msagent.services.env_worker.acting import Acting
from msagent.services.league import LeagueClient
from msagent.user_scripts import build_policy, game_action_space, game_factory
from msagent.vocabulary import EpisodeResult, Fragment, Match, PolicyRef

if TYPE_CHECKING:
    from msagent.services.env_worker.worker import WorkerSettings



def home_players(players: list[str], index: int, num_envs: int,
                 shares: dict[str, int] | None = None) -> list[str]:
    """The trainable player of each of a worker's env slots: round robin over all slots of
    all workers, each player taking ``shares[player]`` (default 1) turns per round."""
    turns = [p for p in players for _ in range((shares or {}).get(p, 1))]
    return [turns[(index * num_envs + k) % len(turns)] for k in range(num_envs)]


def swap_seats(match: Match) -> Match:
    """The same two players with their seats exchanged."""
    seats = tuple(reversed(match.seats))
    return Match(seats, len(seats) - 1 - match.learner_seat)


class MatchQueue:
    """Matches per home player, each drawn match played ``repeat`` times in a row (by the
    next slots to start a game), seats alternating in two-seat games.

    Repeating a draw keeps the opponent distribution (every draw is still the league's) but
    makes the env slots that start games together share opponents, so a step has a few
    large forward passes instead of one small pass per opponent (and the LRU cache hits).
    """

    def __init__(self, homes: list[str], fetch: Callable[[str, int], list[Match]],
                 prefetch: int = 16, repeat: int = 1) -> None:
        self.homes, self.fetch = homes, fetch
        self.prefetch, self.repeat = max(1, prefetch), max(1, repeat)
        self._queues: dict[str, deque[Match]] = {p: deque() for p in set(homes)}

    def __call__(self, k: int) -> Match:
        """The next match of env slot ``k`` (for its home player)."""
        queue = self._queues[self.homes[k]]
        if not queue:
            for match in self.fetch(self.homes[k], self.prefetch):
                for i in range(self.repeat):
                    swap = i % 2 == 1 and len(match.seats) == 2 and not match.fixed_seats
                    queue.append(swap_seats(match) if swap else match)
        return queue.popleft()


class LeagueMatches(MatchQueue):
    """A MatchQueue fed by ``LeagueService``, which also takes the results."""

    def __init__(self, homes: list[str], prefetch: int, repeat: int = 1) -> None:
        super().__init__(homes, self._next_matches, -(-prefetch // max(1, repeat)), repeat)

    @staticmethod
    def _next_matches(player: str, n: int) -> list[Match]:
        """``n`` matches for ``player`` from the league."""
        return LeagueClient.next_matches(player, n)

    def report(self, results: list[EpisodeResult]) -> None:
        """Tell the league how the finished games ended (one call for all)."""
        report_results(results)


def report_results(results: list[EpisodeResult]) -> None:
    """Tell the league how finished games ended (one call for all; none for no games)."""
    if results:
        LeagueClient.report(results)


class OnePolicy:
    """The match source of a single-policy run: ``policy_id`` alone in a one-seat game (or in
    every seat, as plain self-play); nothing to report."""

    def __init__(self, policy_id: str, sides: int = 1) -> None:
        self.policy_id, self.sides = policy_id, sides

    def __call__(self, k: int) -> Match:
        """The one match there is: the policy on every side."""
        return Match((PolicyRef.player(self.policy_id),) * self.sides, 0)

    def report(self, results: list[EpisodeResult]) -> None:
        """Nothing to tell: no league."""


@dataclass
class WorkerPlan:
    """Which tables a worker's fragments go to (by player) and where its matches come from."""

    tables: dict[str, str]
    matches: LeagueMatches | OnePolicy


def worker_plan(settings: WorkerSettings, index: int) -> WorkerPlan:
    """The league's players and matches, or the single policy's one table and one match."""
    league = settings.league
    if league is None:
        return WorkerPlan({settings.policy_id: settings.table}, OnePolicy(settings.policy_id))
    homes = home_players(list(league.tables), index, settings.num_envs, league.shares)
    return WorkerPlan(dict(league.tables), LeagueMatches(homes, league.prefetch, league.repeat))


def worker_acting(settings: WorkerSettings, plan: WorkerPlan, seed: int) -> Acting:
    """The worker's acting: it builds the local policies now (a broken agent script fails
    the worker's start, not its first step)."""
    sc, league = settings.scripts, settings.league
    build = None if settings.central else (
        lambda policy_id: build_policy(sc.env_script, sc.agent_for(policy_id), sc.env_params,
                                       seed))
    bots = load_bots(dict(league.bots) if league else {},
                     lambda: game_action_space(sc.env_script, sc.env_params), seed)
    cache = league.cache_size if league else 1
    return Acting(list(plan.tables), build, bots, cache, settings.central,
                  frozen_greedy=bool(league and league.frozen_greedy))


def worker_collector(settings: WorkerSettings, plan: WorkerPlan, acting: Acting, seed: int,
                     label: str) -> MatchCollector:
    """K games, checked against their declared observation space, playing the plan's matches."""
    sc = settings.scripts
    make = game_factory(sc.env_script, sc.env_params)
    games = [make() for _ in range(settings.num_envs)]
    checker = ObsChecker(games[0].observation_space, label)
    matches = plan.matches
    if isinstance(matches, OnePolicy):  # the one policy plays every side of the game
        matches = OnePolicy(matches.policy_id, num_sides(games[0]))
    return MatchCollector(games, acting, matches, settings.fragment_len, seed, checker,
                          remake=make if settings.restart_failed_envs else None)


def group_by_table(fragments: list[Fragment], tables: dict[str, str]) -> dict[str, list[Fragment]]:
    """Fragments grouped by the table of the player that acted them."""
    out: dict[str, list[Fragment]] = {}
    for fragment in fragments:
        out.setdefault(tables[fragment.policy.policy_id], []).append(fragment)
    return out
