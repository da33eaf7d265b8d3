"""The single-policy case of ``MatchCollector``: one-seat games, one match, one policy.

What the in-process reference benchmark and tests need to play Gymnasium envs exactly as an
env worker of a single-policy run does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msagent.envs.adapters import as_multi_agent
from msagent.envs.checks import ObsChecker
from msagent.envs.collector import Acted
from msagent.envs.match_collector import GroupActFn, MatchCollector, MatchSource
from msagent.vocabulary import Match, ModelKey, PolicyRef


def solo(policy_id: str = "main") -> MatchSource:
    """Every game is ``policy_id`` alone in seat 0."""
    match = Match((PolicyRef.player(policy_id),), 0)
    return lambda k: match


def policy_act(policy: Any, key: ModelKey | Callable[[], ModelKey]) -> GroupActFn:
    """Every group acted by ``policy`` (locally), labelled ``key`` (or ``key()``)."""
    def act(groups):
        label = key() if callable(key) else key
        return {ref: Acted(policy.act(obs, masks, state=states), label)
                for ref, (obs, masks, states) in groups.items()}
    return act


def solo_collector(make_env: Callable[[], Any], num_envs: int, act: GroupActFn, length: int,
                   seed: int, checks: bool = True, label: str = "") -> MatchCollector:
    """K one-seat games of ``make_env`` played by one policy, checked unless ``checks`` is off."""
    games = [as_multi_agent(make_env()) for _ in range(num_envs)]
    checker = ObsChecker(games[0].observation_space, label) if checks else None
    return MatchCollector(games, act, solo(), length, seed, checker)
