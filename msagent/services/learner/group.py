"""A learner group: the N learner instances of one player form one ``torch.distributed``
process group, once, at start.

Rank 0 opens the rendezvous on a free port of its own node and publishes the address on a
runtime topic (so ranks on other nodes of a cluster find it); the other ranks wait for it.
gloo on CPU, NCCL when the policy lives on CUDA. Every collective has a timeout, so a dead
peer ends its group's loops with an error instead of a hang.
"""

from __future__ import annotations

import logging
import socket
import time
from datetime import timedelta

from msagent.errors import MsagentError
from msagent.policy.algorithms.collective import TorchCollective
from msagent.runtime import node_ip, publish, subscribe

log = logging.getLogger(__name__)


class LearnerGroupError(MsagentError, RuntimeError):
    """A learner group could not form, or lost a member."""


def rendezvous_topic(run_id: str, policy_id: str) -> str:
    """The topic rank 0 of a player's learner group publishes its address on."""
    return f"learner-group/{run_id}/{policy_id}"


def free_port(host: str) -> int:
    """A TCP port free on ``host`` right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def group_backend(cuda: bool) -> str:
    """gloo on CPUs; on GPUs, gradients and statistics over NCCL and the CPU flags of the
    group's agreements (refusals, stops) over gloo."""
    return "cpu:gloo,cuda:nccl" if cuda else "gloo"


def join_group(topic: str, rank: int, world: int, generation: int, timeout_s: float,
               cuda: bool = False) -> TorchCollective:
    """Form (rank 0) or join (the others) the group; its collective.

    Raises:
        LearnerGroupError: rank 0's address did not appear within ``timeout_s``, or the group
            did not form.
    """
    import torch.distributed as dist

    address = _publish_address(topic, generation) if rank == 0 else \
        _await_address(topic, generation, timeout_s)
    try:
        dist.init_process_group(group_backend(cuda), init_method=address, rank=rank,
                                world_size=world, timeout=timedelta(seconds=timeout_s))
    except Exception as exc:
        raise LearnerGroupError(f"learner rank {rank} of {world} could not join the group at "
                                f"{address}: {exc}") from exc
    log.info("learner rank %d of %d joined the group at %s", rank, world, address)
    return TorchCollective()


def leave_group() -> None:
    """Destroy this process's group (when it has one)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _publish_address(topic: str, generation: int) -> str:
    """Rank 0: a free port on this node, published with the run's generation."""
    host = node_ip()
    address = f"tcp://{host}:{free_port(host)}"
    publish(topic, {"address": address, "generation": generation})
    return address


def _await_address(topic: str, generation: int, timeout_s: float) -> str:
    """The other ranks: rank 0's address for this generation of the run."""
    sub, deadline = subscribe(topic), time.monotonic() + timeout_s
    version, value = sub.latest()
    while value is None or value.get("generation") != generation:
        left = deadline - time.monotonic()
        found = sub.wait_newer(version, timeout_s=max(left, 0.0)) if left > 0 else None
        if found is None:
            raise LearnerGroupError(f"learner group rendezvous: rank 0 published no address on "
                                    f"{topic} within {timeout_s:.0f} s")
        version, value = found
    return value["address"]
