"""An env worker's side of the league: which player each env slot trains, the matches it plays
(prefetched from ``LeagueService`` in batches) and the results it reports back."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from msagent.envs.match_collector import MatchCollector
from msagent.runtime import Solver
from msagent.services.acting import Acting
from msagent.user_scripts import build_policy, game_factory
from msagent.vocabulary import EpisodeResult, Fragment, Match

if TYPE_CHECKING:
    from msagent.services.env_worker import LeagueSeats, WorkerSettings

LEAGUE_SERVICE = "LeagueService"


def home_players(players: list[str], index: int, num_envs: int) -> list[str]:
    """The trainable player of each of a worker's env slots: round robin over all slots of
    all workers, so every player gets an equal share of the games."""
    return [players[(index * num_envs + k) % len(players)] for k in range(num_envs)]


class LeagueMatches:
    """Hands each env slot its next match; asks the league for ``prefetch`` at a time."""

    def __init__(self, homes: list[str], prefetch: int) -> None:
        self.homes, self.prefetch = homes, max(1, prefetch)
        self._queues: dict[str, deque[Match]] = {p: deque() for p in set(homes)}

    def __call__(self, k: int) -> Match:
        """The next match of env slot ``k`` (for its home player)."""
        player = self.homes[k]
        queue = self._queues[player]
        if not queue:
            queue.extend(Solver().retrieve(LEAGUE_SERVICE, "next_matches", player,
                                           self.prefetch))
        return queue.popleft()

    def report(self, results: list[EpisodeResult]) -> None:
        """Tell the league how the finished games ended (one call for all)."""
        if results:
            Solver().retrieve(LEAGUE_SERVICE, "report", results)


def league_collector(settings: WorkerSettings, league: LeagueSeats, index: int,
                     seed: int) -> tuple[Acting, MatchCollector, LeagueMatches]:
    """Build a league worker's acting, games and match source; waits for the first weights."""
    sc = settings.scripts
    players = list(league.tables)
    build = None if settings.central else (
        lambda: build_policy(sc.env_script, sc.agent_script, sc.env_params, seed))
    acting = Acting(players, build, league.bots, league.cache_size, settings.central)
    for player in players:
        acting.wait_for(player, 1)
    make = game_factory(sc.env_script, sc.env_params)
    games = [make() for _ in range(settings.num_envs)]
    matches = LeagueMatches(home_players(players, index, settings.num_envs), league.prefetch)
    return acting, MatchCollector(games, acting, matches, settings.fragment_len, seed), matches


def group_by_table(fragments: list[Fragment], tables: dict[str, str]) -> dict[str, list[Fragment]]:
    """Fragments grouped by the table of the player that acted them."""
    out: dict[str, list[Fragment]] = {}
    for fragment in fragments:
        out.setdefault(tables[fragment.policy.policy_id], []).append(fragment)
    return out
