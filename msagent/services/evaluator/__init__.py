"""The evaluators: play the learners against fixed opponents (and PSRO's meta-game), and
report the results to the league."""

from __future__ import annotations

from msagent.services.evaluator.evaluator import Evaluator, EvaluatorSettings
from msagent.services.evaluator.meta_evaluator import MetaEvaluator, MetaEvaluatorSettings

__all__ = ["Evaluator", "EvaluatorSettings", "MetaEvaluator", "MetaEvaluatorSettings"]
