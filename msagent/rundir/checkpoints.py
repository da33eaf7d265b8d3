"""Numbered checkpoints in one folder: ``ckpt-{step:09d}.safetensors`` + ``.json``, atomically.

A checkpoint is complete when both files exist. The tensors are written first and the JSON
last, each atomically, so the JSON marks completion: a crash leaves at most a temp file or a
lone ``.safetensors``, both of which :meth:`CheckpointStore.latest` ignores.

A complete checkpoint that does not read back (corrupt tensors, bad JSON, a JSON state that is
not an object or lacks required keys) is skipped for the previous one; each skip is logged and
recorded as a :class:`Skipped` so the caller can tell the user. "No checkpoint at all" is
``steps() == []``; "checkpoints exist but none is usable" is ``steps()`` non-empty while
``latest()`` returns None (then ``skipped`` says why for each).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file
from safetensors.numpy import save as save_tensors

from msagent.rundir.atomic import atomic_write, remove_temp_files

log = logging.getLogger(__name__)

_NAME = re.compile(r"^ckpt-(\d{9,})\.(safetensors|json)$")
TENSORS_EXT, STATE_EXT = ".safetensors", ".json"


class Checkpoint(NamedTuple):
    """One loaded checkpoint; unpacks as ``step, tensors, state``."""

    step: int
    tensors: dict[str, np.ndarray]
    state: dict[str, Any]


class Skipped(NamedTuple):
    """A complete checkpoint that :meth:`CheckpointStore.latest` passed over, and why."""

    path: Path
    reason: str

    def __str__(self) -> str:
        """``"<path>: <reason>"``, one console line."""
        return f"{self.path}: {self.reason}"


class CheckpointStore:
    """Saves, finds and prunes checkpoints in one folder; keeps the newest ``keep``.

    Args:
        folder: Where the checkpoint files live (created if missing).
        keep: How many complete checkpoints survive each save.
        required_keys: Keys the JSON state of a usable checkpoint must have (default none);
            :meth:`latest` skips checkpoints lacking one.

    Attributes:
        skipped: What the last :meth:`latest` call passed over, newest first.
    """

    def __init__(self, folder: Path, keep: int = 3, required_keys: Collection[str] = ()) -> None:
        if keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep}")
        self.folder = Path(folder)
        self.keep = keep
        self.required_keys = tuple(required_keys)
        self.skipped: list[Skipped] = []

    def save(self, step: int, tensors: dict[str, np.ndarray], state: dict[str, Any]) -> Path:
        """Write checkpoint ``step`` crash-safely, then prune old ones; return the JSON path."""
        step = _check_step(step)
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_temp_files(self.folder)
        state_path = self.path(step, STATE_EXT)
        state_path.unlink(missing_ok=True)  # rewriting a step: incomplete until both are new
        atomic_write(self.path(step, TENSORS_EXT), save_tensors(_arrays(tensors)))
        atomic_write(state_path, _json_bytes(state))
        self.prune()
        return state_path

    def latest(self, required_keys: Collection[str] | None = None) -> Checkpoint | None:
        """The newest usable complete checkpoint, or None; what was skipped goes to ``skipped``.

        Args:
            required_keys: Keys the JSON state must have (None: the store's ``required_keys``).
        """
        found, self.skipped = self.latest_with_report(required_keys)
        return found

    def latest_with_report(
        self, required_keys: Collection[str] | None = None
    ) -> tuple[Checkpoint | None, list[Skipped]]:
        """The newest usable checkpoint (or None) and every newer one skipped, with the reason.

        Each skip is also logged as a warning naming the file.
        """
        required = self.required_keys if required_keys is None else tuple(required_keys)
        skipped: list[Skipped] = []
        for step in reversed(self.steps()):
            found = self._try_load(step, required)
            if isinstance(found, Checkpoint):
                return found, skipped
            log.warning("skipping checkpoint %s", found)
            skipped.append(found)
        return None, skipped

    def _try_load(self, step: int, required: tuple[str, ...]) -> Checkpoint | Skipped:
        """Checkpoint ``step``, or why it cannot be used (naming the file at fault)."""
        tensors_path, state_path = self.path(step, TENSORS_EXT), self.path(step, STATE_EXT)
        try:
            tensors = load_file(str(tensors_path))
        except (OSError, ValueError, SafetensorError) as exc:
            return Skipped(tensors_path, f"unreadable tensors: {exc}")
        try:
            state = json.loads(state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return Skipped(state_path, f"unreadable JSON: {exc}")
        problem = _state_problem(state, required)
        return Checkpoint(step, tensors, state) if problem is None else Skipped(state_path, problem)

    def load(self, step: int) -> Checkpoint:
        """Load checkpoint ``step`` (both files must exist)."""
        tensors = load_file(str(self.path(step, TENSORS_EXT)))
        state = json.loads(self.path(step, STATE_EXT).read_text(encoding="utf-8"))
        return Checkpoint(step, tensors, state)

    def steps(self) -> list[int]:
        """Steps of the complete checkpoints, oldest first."""
        found = self._files()
        return sorted(s for s, exts in found.items() if {TENSORS_EXT, STATE_EXT} <= exts)

    def prune(self) -> None:
        """Delete all checkpoint files older than the newest ``keep`` complete checkpoints."""
        complete = self.steps()
        if len(complete) <= self.keep:
            return
        oldest_kept = complete[-self.keep]
        for step, exts in self._files().items():
            if step < oldest_kept:
                for ext in exts:
                    with contextlib.suppress(FileNotFoundError):
                        self.path(step, ext).unlink()

    def path(self, step: int, ext: str) -> Path:
        """The file of checkpoint ``step`` with extension ``ext``."""
        return self.folder / f"ckpt-{step:09d}{ext}"

    def _files(self) -> dict[int, set[str]]:
        """Checkpoint files present, as step -> extensions (temp files never match)."""
        found: dict[int, set[str]] = {}
        if not self.folder.is_dir():
            return found
        for entry in self.folder.iterdir():
            match = _NAME.fullmatch(entry.name)
            if match:
                found.setdefault(int(match.group(1)), set()).add("." + match.group(2))
        return found


def _state_problem(state: Any, required: tuple[str, ...]) -> str | None:
    """What makes a JSON state unusable (not an object, required keys missing), or None."""
    if not isinstance(state, dict):
        return f"the JSON state is a {type(state).__name__}, not an object"
    missing = [key for key in required if key not in state]
    if missing:
        return f"the JSON state lacks the key(s) {', '.join(map(repr, missing))}"
    return None


def _check_step(step: int) -> int:
    """Refuse a step that would not name a file in order; return it as a Python int."""
    if not isinstance(step, (int, np.integer)) or isinstance(step, bool) or step < 0:
        raise ValueError(f"checkpoint step must be an int >= 0, got {step!r}")
    return int(step)


def _arrays(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Contiguous numpy arrays safetensors can write (refusing object arrays by name)."""
    out = {}
    for name, value in tensors.items():
        array = np.asarray(value, order="C")  # keeps 0-d (ascontiguousarray makes 1-d)
        if array.dtype == object:
            raise TypeError(f"checkpoint tensor {name!r} has dtype object; use a numeric dtype")
        out[name] = array
    return out


def _json_bytes(state: dict[str, Any]) -> bytes:
    """Plain JSON of the state (numpy scalars become Python numbers); anything else fails."""
    return json.dumps(state, default=_plain, indent=1).encode("utf-8")


def _plain(value: Any) -> Any:
    """JSON fallback: numpy scalars only; other objects are an error, never pickled."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(
        f"checkpoint state holds a {type(value).__name__}; JSON takes dicts, lists, numbers,"
        " strings, bools and None (put arrays in tensors, or use flatten_state)"
    )
