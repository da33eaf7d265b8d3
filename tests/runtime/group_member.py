"""A service that only joins a learner group and averages numbers (for the cluster test)."""

from __future__ import annotations

import os

import torch

from msagent.runtime import current_instance, register
from msagent.services.learner.group import join_group, leave_group


class GroupMember:
    """Rank ``index`` of a ``world``-member group rendezvousing on ``topic``."""

    def __init__(self, topic: str, world: int) -> None:
        self.rank = current_instance()[1]
        self.collective = join_group(topic, self.rank, world, generation=0, timeout_s=60)

    @register
    def average(self, value: float) -> dict:
        """The group's mean of every member's ``value``, with who answered."""
        tensor = torch.tensor([float(value)])
        self.collective.average([tensor])
        return {"mean": float(tensor.item()), "rank": self.rank, "pid": os.getpid()}

    @register
    def leave(self) -> None:
        """Destroy the group."""
        leave_group()
