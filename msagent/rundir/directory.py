"""One training run's directory: resolved config, checkpoints, log file and TensorBoard events.

Layout::

    <root>/<name>-YYYYmmdd-HHMMSS[-n]/
        .msagent-run          marker (JSON: name, created) that --resume checks for
        config.toml           the resolved config (earlier ones kept as config.<n>.toml)
        train.log             the log file
        tensorboard/          TensorBoard event files
        checkpoints/          ckpt-{step:09d}.safetensors + .json, newest 3 kept
        STOP                  present while a clean stop is asked for (``msagent stop``)
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from msagent.errors import ConfigError
from msagent.rundir.snapshots import SnapshotFiles
from msagent.rundir.atomic import atomic_write
from msagent.rundir.checkpoints import Checkpoint, CheckpointStore

MARKER = ".msagent-run"
CONFIG_NAME = "config.toml"
STOP_NAME = "STOP"
SPILL_NAME = "model_pool_spill"
"""Folder of the in-memory model pool's spilled frozen snapshots while a run lasts."""
KEEP_CHECKPOINTS = 3


class RunDir:
    """A run directory; make one with :meth:`create` or reopen one with :meth:`open`.

    Args:
        path: An existing run directory (use the classmethods, which check).

    Attributes:
        path: The directory, absolute.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path).absolute()
        self._checkpoints = CheckpointStore(self.checkpoint_dir, keep=KEEP_CHECKPOINTS)

    @classmethod
    def create(cls, root: str | Path, name: str, now: datetime | None = None) -> RunDir:
        """Make a fresh ``root/name-YYYYmmdd-HHMMSS[-n]`` (``-n`` when that second is taken)."""
        base = f"{name}-{(now or datetime.now()).strftime('%Y%m%d-%H%M%S')}"
        Path(root).mkdir(parents=True, exist_ok=True)
        for n in range(10_000):
            path = Path(root) / (base if n == 0 else f"{base}-{n}")
            try:
                path.mkdir()
            except FileExistsError:
                continue
            marker = {"name": name, "created": datetime.now().isoformat(timespec="seconds"),
                      "run_id": f"{path.name}-{uuid.uuid4().hex[:8]}"}
            atomic_write(path / MARKER, json.dumps(marker).encode())
            return cls(path)
        raise ConfigError(f"cannot create a run directory {base} under {root}: all names taken")

    @classmethod
    def open(cls, path: str | Path) -> RunDir:
        """Reopen an existing run directory (for ``--resume``), refusing any other folder.

        Raises:
            ConfigError: If ``path`` is missing or was not made by :meth:`create`.
        """
        path = Path(path).expanduser()
        if not path.is_dir():
            raise ConfigError(f"run directory {path} does not exist")
        if not (path / MARKER).is_file():
            raise ConfigError(
                f"{path} is not an msagent run directory (no {MARKER} file);"
                " pass a directory that `msagent train` created"
            )
        return cls(path)

    @property
    def config_path(self) -> Path:
        """Where the resolved config is written."""
        return self.path / CONFIG_NAME

    @property
    def checkpoint_dir(self) -> Path:
        """Folder of the checkpoint files."""
        return self.path / "checkpoints"

    @property
    def log_path(self) -> Path:
        """The run's log file."""
        return self.path / "train.log"

    @property
    def snapshots(self) -> SnapshotFiles:
        """League snapshots written by the learners (restored into the pool on resume)."""
        return SnapshotFiles(self.path / "snapshots")

    @property
    def stop_path(self) -> Path:
        """A file whose presence asks the run's driver to stop cleanly (``msagent stop``)."""
        return self.path / STOP_NAME

    @property
    def tensorboard_dir(self) -> Path:
        """Folder of the TensorBoard event files."""
        return self.path / "tensorboard"

    def write_config(self, text: str) -> Path:
        """Save the resolved config as ``config.toml``; a different earlier one is kept aside."""
        if self.config_path.is_file() and self.config_path.read_text(encoding="utf-8") != text:
            self.config_path.rename(self._free_config_name())
        atomic_write(self.config_path, text.encode("utf-8"))
        return self.config_path

    def save_checkpoint(
        self, step: int, tensors: dict[str, np.ndarray], state: dict[str, Any]
    ) -> Path:
        """Write checkpoint ``step`` atomically (tensors + plain-JSON state); keep the last 3."""
        return self._checkpoints.save(step, tensors, state)

    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest complete checkpoint as ``(step, tensors, state)``, or None."""
        return self._checkpoints.latest()

    def load_checkpoint(self, step: int) -> Checkpoint:
        """Load checkpoint ``step`` (both of its files must exist and read back)."""
        return self._checkpoints.load(step)

    @property
    def checkpoints(self) -> CheckpointStore:
        """The checkpoint store (to tell "none on disk" from "none readable")."""
        return self._checkpoints

    @property
    def run_id(self) -> str:
        """A name for this run that no other run shares (keys in a shared model pool use it).

        Written into the marker when the directory is created; a resumed run reads it back.
        """
        marker = json.loads((self.path / MARKER).read_text(encoding="utf-8"))
        return str(marker.get("run_id") or self.path.name)

    def checkpoint_steps(self) -> list[int]:
        """Steps of the complete checkpoints on disk, oldest first."""
        return self._checkpoints.steps()

    def _free_config_name(self) -> Path:
        """``config.<n>.toml`` with the first unused n, for an earlier config."""
        n = 1
        while (self.path / f"config.{n}.toml").exists():
            n += 1
        return self.path / f"config.{n}.toml"

    def __repr__(self) -> str:
        """Show the path."""
        return f"RunDir({str(self.path)!r})"
