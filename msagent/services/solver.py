"""The seed's import path: ``from msagent.services.solver import Solver``."""

from msagent.runtime.solver import Solver

__all__ = ["Solver"]
