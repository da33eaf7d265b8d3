"""An env worker's side of the league: slot homes, batches, and the match queue."""

from __future__ import annotations

from msagent.services.env_worker.league_client import MatchQueue, home_players, swap_seats
from msagent.train.league_plan import game_facts, player_batches
from msagent.vocabulary import Match, ModelKey, PolicyRef, PolicyScripts

MAIN, SNAP = PolicyRef.player("main"), PolicyRef.snapshot(ModelKey("main", 3))


def test_slots_are_shared_round_robin_by_env_share_across_workers() -> None:
    players = ["main", "main_exploiter", "league_exploiter"]
    assert home_players(players, 0, 4) == ["main", "main_exploiter", "league_exploiter", "main"]
    assert home_players(players, 1, 4)[0] == "main_exploiter"  # slot 4 of all slots
    shares = {"main": 2}
    assert home_players(players, 0, 4, shares) == ["main", "main", "main_exploiter",
                                                   "league_exploiter"]
    assert player_batches(players, 2, 48, shares) == {"main": 48, "main_exploiter": 24,
                                                      "league_exploiter": 24}


def test_each_draw_is_played_repeat_times_with_seats_alternating() -> None:
    draws = iter([Match((MAIN, SNAP), 0), Match((SNAP, MAIN), 1)])
    queue = MatchQueue(["main"] * 3, lambda player, n: [next(draws) for _ in range(n)],
                       prefetch=1, repeat=3)
    got = [queue(k % 3) for k in range(6)]
    assert [m.learner_seat for m in got] == [0, 1, 0, 1, 0, 1]
    assert all(m.learner == MAIN for m in got)
    assert swap_seats(Match((MAIN, SNAP), 0)) == Match((SNAP, MAIN), 1)


def test_fixed_seat_draws_are_repeated_without_swapping() -> None:
    fixed = Match((MAIN, SNAP), 0, fixed_seats=True)
    queue = MatchQueue(["main"], lambda player, n: [fixed] * n, prefetch=1, repeat=4)
    assert [queue(0).learner_seat for _ in range(8)] == [0] * 8


def test_a_players_batch_counts_every_seat_of_its_side(tmp_path) -> None:
    """A team of two against one: a player's side has 1.5 seats on average, so its learner's
    batch is 1.5 fragments per home slot, not one (it updated several times a round, and found
    the round's later fragments stale)."""
    script = tmp_path / "trio_env.py"
    script.write_text(TRIO)
    sides, exact, per_side = game_facts(PolicyScripts(str(script), str(script), {}, 0))
    assert (sides, exact, per_side) == (2, False, 1.5)


TRIO = '''
import gymnasium as gym
import numpy as np
from pettingzoo.utils.env import ParallelEnv


class Trio(ParallelEnv):
    metadata = {"name": "trio_v0"}
    possible_agents = ["a", "b", "c"]

    def observation_space(self, agent):
        return gym.spaces.Box(0, 1, (2,), np.float32)

    def action_space(self, agent):
        return gym.spaces.Discrete(2)


def make_env():
    from msagent.envs.wrappers import Wrapper

    game = Wrapper(Trio())
    game.teams = (0, 0, 1)
    return game
'''
