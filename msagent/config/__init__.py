"""Training configuration: one strict TOML file -> :class:`TrainConfig`.

Use :func:`load_config` to read one (with ``--set`` overrides) and :func:`dump_config` to write
the resolved config back (into a run directory).
"""

from msagent.config.loader import dump_config, load_config, validate_config
from msagent.config.overrides import parse_value
from msagent.config.schema import (
    DEFAULT_TABLE,
    AlgorithmSection,
    BufferSection,
    EnvWorkerSection,
    InferenceSection,
    LearnerSection,
    LoggingSection,
    ModelPoolSection,
    ResourcesSection,
    RunSection,
    ScriptsSection,
    ServicesSection,
    StopSection,
    TrainConfig,
)

__all__ = [
    "DEFAULT_TABLE", "AlgorithmSection", "BufferSection", "EnvWorkerSection", "InferenceSection",
    "LearnerSection", "LoggingSection", "ModelPoolSection", "ResourcesSection", "RunSection",
    "ScriptsSection", "ServicesSection", "StopSection", "TrainConfig", "dump_config",
    "load_config", "parse_value", "validate_config",
]
