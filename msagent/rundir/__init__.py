"""Run directories: resolved config, atomic checkpoints (safetensors + JSON), logs, TensorBoard.

Nothing is pickled: tensors go to safetensors, everything else to plain JSON. Use
:func:`flatten_state` / :func:`unflatten_state` to checkpoint nested states such as an
optimizer's ``state_dict()``.
"""

from msagent.rundir.checkpoints import Checkpoint, CheckpointStore
from msagent.rundir.directory import CONFIG_NAME, KEEP_CHECKPOINTS, MARKER, RunDir
from msagent.rundir.state_codec import flatten_state, unflatten_state

__all__ = [
    "CONFIG_NAME", "KEEP_CHECKPOINTS", "MARKER", "Checkpoint", "CheckpointStore", "RunDir",
    "flatten_state", "unflatten_state",
]
