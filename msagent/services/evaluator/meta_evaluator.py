"""PSRO's meta-game evaluator: takes entry tasks from the league and reports each entry's
payoffs per seat: exact expected returns by tree traversal for sequential OpenSpiel games,
else the returns of sampled games between the frozen members (batched, no fragments).
Several instances split the new entries of an iteration between them."""

from __future__ import annotations

from dataclasses import dataclass

from msagent.envs.match_games import play_seating
from msagent.psro.neural import NetworkTables, tables_from_scripts
from msagent.runtime import current_instance, register
from msagent.services.env_worker import Acting
from msagent.services.inference import pull_weights
from msagent.services.league import LeagueClient
from msagent.services.looping import Looping
from msagent.user_scripts import build_policy, game_factory
from msagent.vocabulary import PolicyRef, PolicyScripts

IDLE_S = 0.2
"""Rest between polls while the league has no task."""


@dataclass
class MetaEvaluatorSettings:
    """How the entries are played.

    Attributes:
        scripts: The user's env and agent scripts.
        num_envs: Games played side by side.
        cache_size: Members' policies kept in the LRU cache.
        exact: For sequential OpenSpiel games, compute entries by tree traversal (no games).
        greedy: Members take their most likely action (PSRO's ``member_play = "greedy"``).
    """

    scripts: PolicyScripts
    num_envs: int = 16
    cache_size: int = 64
    exact: bool = True
    greedy: bool = False


class MetaEvaluator(Looping):
    """Plays meta-game entries until stopped; ``games`` counts what it played."""

    def __init__(self, settings: MetaEvaluatorSettings) -> None:
        super().__init__()
        self.s = settings
        self.service, self.index = current_instance()
        self.games = 0

    @register(concurrent=True)
    def drain(self) -> dict:
        """Games played so far and the error if the loop failed (the driver's supervision)."""
        return {"results": [], "games": self.games, "error": self.error}

    def _loop(self) -> None:
        """Ask for a task, play it, report it; rest while there is none."""
        sc = self.s.scripts
        seed = sc.seed + 104729 * (self.index + 1)
        acting = Acting([], lambda pid: build_policy(sc.env_script, sc.agent_for(pid),
                                                     sc.env_params, seed), {},
                        self.s.cache_size, False,
                        frozen_greedy=self.s.greedy)
        tables = self._tables(seed)
        make = game_factory(sc.env_script, sc.env_params)
        envs = [make() for _ in range(self.s.num_envs)] if tables is None else []
        while not self._stop.is_set():
            task = LeagueClient.next_eval_task()
            if task is None:
                self._stop.wait(IDLE_S)
            elif tables is not None:
                LeagueClient.report_eval(task.task, [tables.entry(task.seats).tolist()], True)
            else:
                seats = [PolicyRef.parse(s) for s in task.seats]
                returns = play_seating(envs, acting, seats, task.games, seed + 7 * task.task)
                LeagueClient.report_eval(task.task, returns)
                self.games += len(returns)

    def _tables(self, seed: int) -> NetworkTables | None:
        """Exact entries by tree traversal where the game allows it (else None: sampled)."""
        sc = self.s.scripts
        if not self.s.exact:
            return None
        found = tables_from_scripts(sc.env_script, sc.agent_script, sc.env_params, seed,
                                    lambda m: pull_weights(PolicyRef.parse(m).key),
                                    self.s.greedy)
        return found if isinstance(found, NetworkTables) else None
