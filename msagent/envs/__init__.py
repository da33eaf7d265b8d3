"""Environments: vectorized stepping and cutting trajectories into fragments."""

from msagent.envs.collector import Acted, FragmentCollector, make_vector_env

__all__ = ["Acted", "FragmentCollector", "make_vector_env"]
