"""Training: the wiring of services and the driver that watches them.

Names are imported on first use, so that ``msagent.train.supported`` (checked by the CLI
before Ray starts) does not import torch and the services.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"TrainingError": "driver", "run_training": "driver", "Services": "run_services",
          "connect_services": "wiring", "check_supported": "supported"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Import the module that defines ``name`` on first access."""
    if name not in _WHERE:
        raise AttributeError(f"module 'msagent.train' has no attribute {name!r}")
    return getattr(importlib.import_module(f"msagent.train.{_WHERE[name]}"), name)
