"""Where a learner trains: ``services.learner.device`` as a torch device, and batches moved there.

Env workers, inference servers and evaluators act on the CPU (small batches, where a GPU's
launch latency would cost more than it saves); only the learner's policy, its optimizer state
and its batches move to a GPU.
"""

from __future__ import annotations

import re

import torch
from torch import Tensor

from msagent.errors import ConfigError
from msagent.vocabulary import DEVICE_PATTERN


def resolve_device(name: str, setting: str = "services.learner.device") -> torch.device:
    """The torch device ``name`` means here (``auto``: the first GPU when torch sees one).

    Args:
        name: ``cpu``, ``cuda``, ``cuda:N`` or ``auto``.
        setting: The config key it came from, for messages.

    Raises:
        ConfigError: a GPU is asked for that this process cannot use, naming what torch sees.
    """
    if not re.fullmatch(DEVICE_PATTERN, name):
        raise ConfigError(f"{setting} = {name!r}: use 'cpu', 'cuda', 'cuda:N' or 'auto'")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= count:
            section = setting.rsplit(".", 1)[0]
            raise ConfigError(f"{setting} = {name!r}, but torch sees {count} GPU(s) in this "
                              f"process (torch {torch.__version__}, CUDA "
                              f"{torch.version.cuda or 'not built in'}); on a Ray cluster give "
                              f"the service a GPU with {section}.resources.num_gpus = 1")
    return device


def to_device(batch: dict[str, Tensor], device: torch.device) -> dict[str, Tensor]:
    """Every tensor of a batch on ``device`` (the batch itself when it is the CPU)."""
    if device.type == "cpu":
        return batch
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def device_name(device: torch.device) -> str:
    """``cpu``, or the GPU as ``cuda:0 (NVIDIA H200)``: what a service logs it runs on."""
    if device.type != "cuda":
        return str(device)
    return f"{device} ({torch.cuda.get_device_name(device)})"
