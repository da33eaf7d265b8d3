"""Training: the wiring of services and the driver that watches them."""

from msagent.train.driver import TrainingError, run_training
from msagent.train.wiring import Services, check_supported, connect_services

__all__ = ["Services", "TrainingError", "check_supported", "connect_services", "run_training"]
