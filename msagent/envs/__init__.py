"""Environments: vectorized stepping, checking what envs return, cutting fragments."""

from msagent.envs.checks import ObsChecker, space_spec
from msagent.envs.collector import Acted, FragmentCollector, make_vector_env

__all__ = ["Acted", "FragmentCollector", "ObsChecker", "make_vector_env", "space_spec"]
