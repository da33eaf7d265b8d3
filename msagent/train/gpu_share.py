"""What share of a GPU each learner and inference server asks Ray for when its ``device``
names a GPU and its ``resources.num_gpus`` is unset.

Ray hides every GPU from an actor that asks for none (it sets ``CUDA_VISIBLE_DEVICES`` to
nothing), so ``device = "cuda"`` alone would find no GPU, even on the machine the embedded Ray
runs on. Unset, each such instance asks for ``1 / k`` of a GPU, ``k`` being the run's
GPU-using instances: on one GPU they all fit. A cluster spreading them over several GPUs says
``num_gpus`` itself (``deploy/league_cluster.toml`` does).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from msagent.config import TrainConfig
from msagent.runtime.backend import Resources


def wants_gpu(device: str) -> bool:
    """Whether ``device`` asks for a GPU: ``cuda``/``cuda:N``, or ``auto`` where the driver's
    machine has one (a cluster's head seldom does: its learners then say ``num_gpus``)."""
    if device.startswith("cuda"):
        return True
    if device != "auto":
        return False
    import torch

    return torch.cuda.is_available()


def gpu_instances(cfg: TrainConfig, learners: list[Any]) -> int:
    """Learner and inference-server instances of the run that ask for a GPU share
    (``learners``: each player's learner section)."""
    sv = cfg.services
    learners = sum(sv.learner.num for section in learners if _unset_gpu(section))
    central = sv.inference.mode == "central"
    servers = sv.inference.num if central and _unset_gpu(sv.inference) else 0
    return learners + servers


def gpu_resources(section: Any, instances: int) -> Resources:
    """The section's resources, with a ``1 / instances`` GPU share when it needs one."""
    resources = section.resources.to_resources()
    if not _unset_gpu(section) or instances < 1:
        return resources
    return dataclasses.replace(resources, num_gpus=round(1.0 / instances, 4))


def _unset_gpu(section: Any) -> bool:
    """Whether the service runs on a GPU but its config gives it no GPU share."""
    device = getattr(section, "device", "cpu")  # services without one act on the CPU
    return wants_gpu(device) and section.resources.num_gpus is None
