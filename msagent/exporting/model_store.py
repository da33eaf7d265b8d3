"""The versioned model store game clients download from: ONNX files and their manifests.

Layout under the store's root (a local folder or any fsspec URI, e.g. ``s3://bucket/models``
or ``memory://models`` in tests)::

    <game>/v000001/.claim         who took version 1 (created exclusively: no version is reused)
    <game>/v000001/model.onnx     the model
    <game>/v000001/manifest.json  what it is (:class:`Manifest`); a version exists once this does
    <game>/latest.json            a copy of the newest version's manifest, written last

Every file is written whole (a temp file renamed into place), the model before its manifest and
``latest.json`` last, so a reader never sees a manifest whose model is missing or half-written.
No torch here: the gateway and game clients import this module.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Literal

import fsspec
from fsspec.implementations.local import LocalFileSystem
from pydantic import BaseModel, ConfigDict, Field, field_validator

from msagent.errors import MsagentError
from msagent.experience.schema import GAME_NAME
from msagent.rundir.atomic import atomic_write

MODEL_FILE, MANIFEST_FILE, LATEST_FILE, CLAIM_FILE = (
    "model.onnx", "manifest.json", "latest.json", ".claim")
_VERSION_DIR = re.compile(r"^v(\d{6,})$")
MAX_CLAIM_TRIES = 1000
"""How many taken versions a publisher steps over before giving up."""
_CLAIM_LOCK = threading.Lock()
"""Serialises exclusive creates in this process (fsspec's in-memory store checks, then adds)."""


class ModelStoreError(MsagentError, ValueError):
    """A bad game name or version, or a store that does not hold what was asked."""


class ModelIntegrityError(ModelStoreError):
    """A stored model's bytes do not match its manifest's sha256 or size."""


class TensorSpec(BaseModel):
    """One input or output of the ONNX graph: name, shape (``"batch"`` on axis 0), dtype."""

    model_config = ConfigDict(frozen=True)

    name: str
    shape: list[int | Literal["batch"]]
    dtype: Literal["float32", "uint8", "bool", "int64"]


class Manifest(BaseModel):
    """What a published model is: where it came from, its checksum and its I/O contract.

    Attributes:
        game: The game's name (a URL segment, :data:`GAME_NAME`).
        version: 1, 2, ... per game, never reused.
        sha256: Hex digest of the model file.
        size: Bytes of the model file.
        created_at: Unix time of publishing.
        opset: The ONNX default-domain opset of the graph.
        format: Always ``"onnx"``.
        inputs: The graph's inputs (``obs``, and ``action_mask`` when the policy uses masks).
        outputs: The graph's outputs (``logits``, ``value``; or ``mean``, ``log_std``, ``value``).
        action: ``{"n": int}`` (Discrete), ``{"nvec": [int, ...]}`` (MultiDiscrete: the
            ``logits`` are each component's side by side) or ``{"shape": [d], "low": [...],
            "high": [...]}`` (Box).
        source: Where the weights came from (run dir, policy id, parameter version, ...).
    """

    model_config = ConfigDict(frozen=True)

    game: str = Field(pattern=GAME_NAME.pattern)
    version: int = Field(ge=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)
    created_at: float
    opset: int = Field(ge=1)
    format: Literal["onnx"] = "onnx"
    inputs: list[TensorSpec]
    outputs: list[TensorSpec]
    action: dict[str, Any]
    source: dict[str, Any] = Field(default_factory=dict)

    @field_validator("action")
    @classmethod
    def _one_action_space(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Exactly one of ``n`` (Discrete), ``nvec`` (MultiDiscrete) and ``shape`` (Box), so
        clients know how to act."""
        if sum(key in value for key in ("n", "nvec", "shape")) != 1:
            raise ValueError('action must hold exactly one of "n" (Discrete), "nvec" '
                             '(MultiDiscrete) and "shape" (Box)')
        return value

    def to_json(self) -> bytes:
        """The manifest as indented JSON bytes (what ``manifest.json`` holds)."""
        return self.model_dump_json(indent=1).encode("utf-8")


def check_game(game: str) -> str:
    """The game name if it is a plain name (no path can escape the store's root), else refuse."""
    if not isinstance(game, str) or not GAME_NAME.fullmatch(game):
        raise ModelStoreError(f"bad game name {game!r}: use letters, digits, '_', '.' and '-' "
                              "(at most 64, starting with a letter or digit)")
    return game


class ModelStore:
    """Publishes and reads versioned ONNX models of games under one root (folder or fsspec URI).

    Args:
        uri: A local folder or an fsspec URI (``memory://models``, ``s3://bucket/models``).
    """

    def __init__(self, uri: str | os.PathLike[str]) -> None:
        self.uri = str(uri)
        self.fs, root = fsspec.core.url_to_fs(self.uri)
        self.root = root.rstrip("/")
        self._local = isinstance(self.fs, LocalFileSystem)

    def publish(self, game: str, onnx_bytes: bytes, info: dict[str, Any]) -> Manifest:
        """Store ``onnx_bytes`` as the game's next version and point ``latest.json`` at it.

        Args:
            game: The game's name.
            onnx_bytes: The serialized ONNX model.
            info: The manifest's other fields: ``opset``, ``inputs``, ``outputs``, ``action``
                and ``source``.
        """
        check_game(game)
        draft = Manifest(game=game, version=1, sha256=hashlib.sha256(onnx_bytes).hexdigest(),
                         size=len(onnx_bytes), created_at=time.time(), **info)
        manifest = draft.model_copy(update={"version": self._claim(game)})
        self._write(self._path(game, manifest.version, MODEL_FILE), bytes(onnx_bytes))
        self._write(self._path(game, manifest.version, MANIFEST_FILE), manifest.to_json())
        self._point_latest(game)
        return manifest

    def latest(self, game: str) -> Manifest | None:
        """The newest published version's manifest (None: nothing published for the game)."""
        return self._load_manifest(self._join(check_game(game), LATEST_FILE))

    def manifest(self, game: str, version: int) -> Manifest | None:
        """Version ``version``'s manifest (None: no such complete version)."""
        return self._load_manifest(self._path(game, version, MANIFEST_FILE))

    def read(self, game: str, version: int) -> bytes:
        """The model file of a version, checked against its manifest's sha256 and size.

        Raises:
            ModelStoreError: no such version.
            ModelIntegrityError: the file is missing or its bytes do not match the manifest.
        """
        manifest = self.manifest(game, version)
        if manifest is None:
            raise ModelStoreError(f"{self.uri}: game {game!r} has no version {version}")
        path = self._path(game, version, MODEL_FILE)
        try:
            data = self.fs.cat_file(path)
        except FileNotFoundError:
            raise ModelIntegrityError(f"{path}: the model file of {game} v{version} is "
                                      "missing") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != manifest.sha256 or len(data) != manifest.size:
            raise ModelIntegrityError(
                f"{path} is corrupt: sha256 {digest} ({len(data)} bytes) but the manifest says "
                f"{manifest.sha256} ({manifest.size} bytes)")
        return data

    def versions(self, game: str) -> list[int]:
        """The game's complete versions (those with a manifest), oldest first."""
        pattern = self._join(check_game(game), "v*", MANIFEST_FILE)
        found = (_version_of(Path(p).parent.name) for p in self.fs.glob(pattern))
        return sorted(v for v in found if v is not None)

    def games(self) -> list[str]:
        """Games with at least a folder in the store."""
        try:
            names = [Path(p).name for p in self.fs.ls(self.root or "/", detail=False)]
        except FileNotFoundError:
            return []
        return sorted(n for n in names if GAME_NAME.fullmatch(n))

    # ------------------------------------------------------------------------------ internals

    def _join(self, *parts: str) -> str:
        """A path under the root."""
        return "/".join([self.root, *parts])

    def _path(self, game: str, version: int, name: str) -> str:
        """``<root>/<game>/v<version:06d>/<name>``."""
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise ModelStoreError(f"bad version {version!r}: versions are integers from 1")
        return self._join(check_game(game), f"v{version:06d}", name)

    def _claimed(self, game: str) -> list[int]:
        """Versions taken so far, complete or not."""
        try:
            names = self.fs.ls(self._join(game), detail=False)
        except FileNotFoundError:
            return []
        found = (_version_of(Path(p).name) for p in names)
        return [v for v in found if v is not None]

    def _claim(self, game: str) -> int:
        """Take the next free version by creating its claim file exclusively."""
        for _ in range(MAX_CLAIM_TRIES):
            version = max(self._claimed(game), default=0) + 1
            path = self._path(game, version, CLAIM_FILE)
            try:
                self._create_exclusive(path, _claim_note())
            except FileExistsError:
                continue  # another publisher took it: try the next one
            return version
        raise ModelStoreError(f"{self.uri}: could not claim a version of {game!r} in "
                              f"{MAX_CLAIM_TRIES} tries")

    def _create_exclusive(self, path: str, data: bytes) -> None:
        """Create ``path`` only if it does not exist (FileExistsError otherwise)."""
        with _CLAIM_LOCK:
            self.fs.makedirs(self.fs._parent(path), exist_ok=True)
            with self.fs.open(path, "xb") as f:
                f.write(data)

    def _write(self, path: str, data: bytes) -> None:
        """Write a whole file so readers see the old one or the new one, never a part."""
        parent = self.fs._parent(path)
        self.fs.makedirs(parent, exist_ok=True)
        if self._local:
            atomic_write(Path(path), data)
            return
        temp = f"{parent}/.{Path(path).name}.{uuid.uuid4().hex}.tmp"
        self.fs.pipe_file(temp, data)
        self.fs.mv(temp, path)

    def _point_latest(self, game: str) -> None:
        """Copy the newest complete manifest to ``latest.json``; repeat while a concurrent
        publisher completed a newer one meanwhile, so ``latest`` never ends behind."""
        written = None
        while True:
            newest = max(self.versions(game), default=None)
            if newest is None or newest == written:
                return
            manifest = self.fs.cat_file(self._path(game, newest, MANIFEST_FILE))
            self._write(self._join(game, LATEST_FILE), manifest)
            written = newest

    def _load_manifest(self, path: str) -> Manifest | None:
        """The manifest at ``path``, or None when there is no such file."""
        try:
            text = self.fs.cat_file(path)
        except FileNotFoundError:
            return None
        return Manifest.model_validate_json(text)


def _version_of(name: str) -> int | None:
    """The version a ``v000001`` folder name stands for, or None for other names."""
    match = _VERSION_DIR.fullmatch(name)
    return int(match.group(1)) if match else None


def _claim_note() -> bytes:
    """What a claim file says: who took the version, and when (for a human looking)."""
    note = {"host": socket.gethostname(), "pid": os.getpid(), "time": time.time()}
    return json.dumps(note).encode("utf-8")
