"""Environments: games with seats, adapters, checks, collecting fragments from matches."""

from msagent.envs.checks import ObsChecker, space_spec
from msagent.envs.collector import Acted
from msagent.envs.match_collector import MatchCollector
from msagent.envs.solo import policy_act, solo, solo_collector

__all__ = ["Acted", "MatchCollector", "ObsChecker", "policy_act", "solo", "solo_collector",
           "space_spec"]
