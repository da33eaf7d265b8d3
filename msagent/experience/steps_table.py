"""Episode records as Arrow tables of one row per step, and back, without per-row Python.

The experience store keeps one Parquet row per step (see :data:`STEP_COLUMNS`); what a row
cannot say (the observation's and a Box action's shape, a MultiDiscrete action's choices per
component) travels in the file's key-value metadata as a :class:`Layout`. Reading reassembles
the records: the rows of each ``(client_id, episode_id, part)`` are taken from one stored copy
only (a record written twice, because a consumer died between writing and acknowledging it,
comes back once).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from msagent.errors import MsagentError
from msagent.experience.records import EpisodeRecord, Provenance

STEPS_FORMAT = "msagent-steps/1"
"""Tag of the row layout, kept in every file's metadata."""

KEY_COLUMNS = ["client_id", "episode_id", "part"]
"""What identifies one stored record."""

STEP_COLUMNS = KEY_COLUMNS + ["step", "received_at", "client_version", "model_version", "obs",
                              "action", "reward", "log_prob", "terminated", "truncated"]
"""Every column of a steps file (the ``game`` and ``date`` are the hive partitions)."""

FILE_COLUMN = "file"
"""Column the store adds while reading: which file a row came from (to keep one copy)."""


class StoreError(MsagentError, ValueError):
    """Stored experience cannot be written or read as asked; the message names the file."""


@dataclass(frozen=True)
class Layout:
    """The shapes and dtypes one game's rows share.

    Attributes:
        obs_shape: Shape of one observation.
        obs_dtype: ``float32`` or ``uint8``.
        action_shape: Shape of one Box or MultiDiscrete action (``[K]``); None for a Discrete
            action (an int64 column).
        action_nvec: Choices of each component of a MultiDiscrete action (a column of K
            int64s); None for the others. Files written before it existed have none.
    """

    obs_shape: tuple[int, ...]
    obs_dtype: str
    action_shape: tuple[int, ...] | None
    action_nvec: tuple[int, ...] | None = None

    @classmethod
    def of(cls, record: EpisodeRecord) -> Layout:
        """The layout a record's arrays have."""
        obs_dtype = "uint8" if record.observations.dtype == np.uint8 else "float32"
        obs_shape = tuple(record.observations.shape[1:])
        if record.action_nvec is not None:
            return cls(obs_shape, obs_dtype, *_multi_discrete(record))
        discrete = record.actions.ndim == 1 and record.actions.dtype.kind in "iub"
        return cls(obs_shape, obs_dtype, None if discrete else tuple(record.actions.shape[1:]))

    def metadata(self) -> dict[bytes, bytes]:
        """The layout as Parquet key-value metadata (``msagent.action_nvec`` only for
        MultiDiscrete actions, so other files stay as they were)."""
        meta = {b"msagent.format": STEPS_FORMAT.encode(),
                b"msagent.obs_shape": json.dumps(list(self.obs_shape)).encode(),
                b"msagent.obs_dtype": self.obs_dtype.encode(),
                b"msagent.action_shape": json.dumps(None if self.action_shape is None
                                                    else list(self.action_shape)).encode()}
        if self.action_nvec is not None:
            meta[b"msagent.action_nvec"] = json.dumps(list(self.action_nvec)).encode()
        return meta

    @classmethod
    def from_schema(cls, schema: pa.Schema, where: str) -> Layout:
        """The layout a file's metadata declares, checked against its columns."""
        meta = schema.metadata or {}
        if meta.get(b"msagent.format") != STEPS_FORMAT.encode():
            raise StoreError(f"{where}: not a {STEPS_FORMAT} file (no msagent metadata)")
        action = json.loads(meta[b"msagent.action_shape"])
        nvec = json.loads(meta.get(b"msagent.action_nvec", b"null"))
        layout = cls(tuple(json.loads(meta[b"msagent.obs_shape"])),
                     meta[b"msagent.obs_dtype"].decode(),
                     None if action is None else tuple(action),
                     None if nvec is None else tuple(nvec))
        if schema.field("obs").type != layout.obs_type():
            raise StoreError(f"{where}: column obs is {schema.field('obs').type}, but the "
                             f"metadata declares observations of shape {list(layout.obs_shape)} "
                             f"and dtype {layout.obs_dtype} ({layout.obs_type()})")
        if schema.field("action").type != layout.action_type():
            raise StoreError(f"{where}: column action is {schema.field('action').type}, but "
                             f"the metadata declares {layout.describe_actions()} "
                             f"({layout.action_type()})")
        return layout

    def describe_actions(self) -> str:
        """The action space in words, for error messages."""
        if self.action_nvec is not None:
            return f"MultiDiscrete({list(self.action_nvec)}) actions"
        if self.action_shape is None:
            return "Discrete actions"
        return f"Box actions of shape {list(self.action_shape)}"

    def obs_type(self) -> pa.DataType:
        """The obs column's type: one flattened observation per row."""
        value = pa.uint8() if self.obs_dtype == "uint8" else pa.float32()
        return pa.list_(value, math.prod(self.obs_shape))

    def action_type(self) -> pa.DataType:
        """The action column's type: int64 (Discrete), K int64s (MultiDiscrete), or one
        flattened float32 Box action per row."""
        if self.action_shape is None:
            return pa.int64()
        value = pa.float32() if self.action_nvec is None else pa.int64()
        return pa.list_(value, math.prod(self.action_shape))

    def schema(self) -> pa.Schema:
        """The Arrow schema of a steps file of this layout, metadata included."""
        action = self.action_type()
        fields = [("client_id", pa.string()), ("episode_id", pa.string()), ("part", pa.int32()),
                  ("step", pa.int32()), ("received_at", pa.float64()),
                  ("client_version", pa.string()), ("model_version", pa.int64()),
                  ("obs", self.obs_type()), ("action", action), ("reward", pa.float32()),
                  ("log_prob", pa.float32()), ("terminated", pa.bool_()),
                  ("truncated", pa.bool_())]
        return pa.schema(fields, metadata=self.metadata())


def steps_table(records: list[EpisodeRecord]) -> pa.Table:
    """One row per step of the records, which must all share one :class:`Layout`."""
    layout = _common_layout(records)
    lengths = np.array([len(r) for r in records], dtype=np.int64)
    if not records or lengths.min() < 1:
        raise StoreError("every stored record needs at least one step")
    row_record = np.repeat(np.arange(len(records)), lengths)
    starts = np.cumsum(lengths) - lengths
    ends = starts + lengths - 1
    prov = [r.provenance for r in records]
    versions = [p.model_version for p in prov]
    columns = {
        "client_id": _repeat([p.client_id for p in prov], row_record),
        "episode_id": _repeat([r.episode_id for r in records], row_record),
        "part": np.repeat(np.array([r.part for r in records], np.int32), lengths),
        "step": (np.arange(len(row_record)) - starts[row_record]).astype(np.int32),
        "received_at": np.repeat(np.array([p.received_at for p in prov], np.float64), lengths),
        "client_version": _repeat([p.client_version for p in prov], row_record),
        "model_version": pa.array(np.repeat([v or 0 for v in versions], lengths).astype(np.int64),
                                  mask=np.repeat([v is None for v in versions], lengths)),
        "obs": _fixed_lists([r.observations for r in records], layout.obs_type()),
        "action": _actions(records, layout),
        "reward": np.concatenate([r.rewards for r in records]).astype(np.float32),
        "log_prob": _log_probs(records),
        "terminated": _last_step_flags([r.terminated for r in records], ends, len(row_record)),
        "truncated": _last_step_flags([r.truncated for r in records], ends, len(row_record)),
    }
    return pa.Table.from_pydict(columns, schema=layout.schema())


def _common_layout(records: list[EpisodeRecord]) -> Layout:
    """The layout every record shares (StoreError names the first that differs)."""
    if not records:
        raise StoreError("no records to store")
    layout = Layout.of(records[0])
    for record in records[1:]:
        if Layout.of(record) != layout:
            raise StoreError(f"game {record.game!r}: record {record.episode_id!r} has layout "
                             f"{Layout.of(record)}, the batch's first record {layout}")
    return layout


def _multi_discrete(record: EpisodeRecord) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A MultiDiscrete record's action shape ``(K,)`` and nvec, if its actions are ``[T, K]``
    integers (StoreError otherwise: such a record did not come from its game's schema)."""
    nvec, actions = record.action_nvec, record.actions
    if actions.ndim != 2 or actions.shape[1] != len(nvec) or actions.dtype.kind not in "iu":
        raise StoreError(f"game {record.game!r}: record {record.episode_id!r} declares "
                         f"MultiDiscrete({list(nvec)}) actions but holds {actions.dtype} "
                         f"actions of shape {list(actions.shape)}")
    return (len(nvec),), tuple(nvec)


def _repeat(values: list[str], row_record: np.ndarray) -> pa.Array:
    """A string column repeating each record's value over its steps."""
    return pa.array(values, pa.string()).take(pa.array(row_record))


def _fixed_lists(arrays: list[np.ndarray], type_: pa.FixedSizeListType) -> pa.Array:
    """Per-step arrays flattened into a fixed-size-list column."""
    dtype = type_.value_type.to_pandas_dtype()
    flat = np.concatenate([a.reshape(-1) for a in arrays]).astype(dtype)
    return pa.FixedSizeListArray.from_arrays(pa.array(flat), type_.list_size)


def _actions(records: list[EpisodeRecord], layout: Layout) -> pa.Array | np.ndarray:
    """The action column: int64 for Discrete, fixed-size int64 lists for MultiDiscrete,
    fixed-size float32 lists for Box."""
    if layout.action_shape is None:
        return np.concatenate([r.actions for r in records]).astype(np.int64)
    return _fixed_lists([r.actions for r in records], layout.action_type())


def _log_probs(records: list[EpisodeRecord]) -> pa.Array:
    """Behaviour log-probabilities; null for the steps of records that sent none."""
    values = [np.zeros(len(r), np.float32) if r.log_probs is None else r.log_probs
              for r in records]
    mask = np.concatenate([np.full(len(r), r.log_probs is None) for r in records])
    return pa.array(np.concatenate(values).astype(np.float32), mask=mask)


def _last_step_flags(flags: list[bool], ends: np.ndarray, rows: int) -> np.ndarray:
    """A flag column true only on the last step of the records whose flag is set."""
    column = np.zeros(rows, dtype=bool)
    column[ends] = np.array(flags, dtype=bool)
    return column


def records_from_table(table: pa.Table, game: str, layout: Layout,
                       limit: int | None = None) -> list[EpisodeRecord]:
    """The records a steps table holds (one copy each), oldest ``received_at`` first."""
    if table.num_rows == 0:
        return []
    order, starts, ends = _one_copy_each(table)
    received = table.column("received_at").to_numpy()[order[starts]]
    by_time = np.argsort(received, kind="stable")[:limit]
    rows = pa.array(order)
    cols = {name: table.column(name).take(rows).combine_chunks() for name in STEP_COLUMNS}
    return _Assembler(cols, game, layout).records(starts[by_time], ends[by_time])


def unique_keys(table: pa.Table) -> int:
    """How many distinct ``(client_id, episode_id, part)`` a table of key columns holds."""
    return table.group_by(KEY_COLUMNS).aggregate([]).num_rows


def _one_copy_each(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row order grouping each record's steps (first stored copy only), and each kept
    record's start and end (exclusive) in that order."""
    client = _codes(table.column("client_id"))
    episode = _codes(table.column("episode_id"))
    part = table.column("part").to_numpy()
    file = table.column(FILE_COLUMN).to_numpy()
    step = table.column("step").to_numpy()
    order = np.lexsort((step, file, part, episode, client))
    client, episode, part, file = client[order], episode[order], part[order], file[order]
    new_key = np.r_[True, (client[1:] != client[:-1]) | (episode[1:] != episode[:-1])
                    | (part[1:] != part[:-1])]
    new_copy = new_key | np.r_[True, file[1:] != file[:-1]]
    copy_id = np.cumsum(new_copy) - 1
    first_copy = np.maximum.accumulate(np.where(new_key, copy_id, 0))
    keep = copy_id == first_copy
    order = order[keep]
    bounds = np.flatnonzero(new_key[keep])
    return order, bounds, np.r_[bounds[1:], len(order)]


def _codes(column: pa.ChunkedArray) -> np.ndarray:
    """Integer codes of a string column (equal strings, equal codes)."""
    return pc.dictionary_encode(column.combine_chunks()).indices.to_numpy()


class _Assembler:
    """Cuts sorted step columns into EpisodeRecords, one slice per record."""

    def __init__(self, cols: dict[str, pa.Array], game: str, layout: Layout) -> None:
        self.game, self.cols, self.nvec = game, cols, layout.action_nvec
        self.obs = cols["obs"].flatten().to_numpy().reshape(-1, *layout.obs_shape)
        action = cols["action"]
        self.actions = (action.to_numpy() if layout.action_shape is None
                        else action.flatten().to_numpy().reshape(-1, *layout.action_shape))
        self.rewards = cols["reward"].to_numpy()
        self.logp_null = cols["log_prob"].is_null().to_numpy(zero_copy_only=False)
        self.logp = cols["log_prob"].fill_null(0.0).to_numpy()
        self.terminated = cols["terminated"].to_numpy(zero_copy_only=False)
        self.truncated = cols["truncated"].to_numpy(zero_copy_only=False)

    def records(self, starts: np.ndarray, ends: np.ndarray) -> list[EpisodeRecord]:
        """One record per ``[start, end)`` slice."""
        first = pa.array(starts)
        text = {n: self.cols[n].take(first).to_pylist()
                for n in ("client_id", "episode_id", "client_version", "model_version")}
        parts = self.cols["part"].to_numpy()[starts].tolist()
        received = self.cols["received_at"].to_numpy()[starts].tolist()
        return [self._record(int(s), int(e), Provenance(
                    text["client_id"][i], received[i], text["client_version"][i],
                    text["model_version"][i]), text["episode_id"][i], parts[i])
                for i, (s, e) in enumerate(zip(starts, ends))]

    def _record(self, s: int, e: int, prov: Provenance, episode_id: str,
                part: int) -> EpisodeRecord:
        """The record of rows ``s`` to ``e``."""
        return EpisodeRecord(
            game=self.game, episode_id=episode_id, observations=self.obs[s:e],
            actions=self.actions[s:e], rewards=self.rewards[s:e],
            log_probs=None if self.logp_null[s] else self.logp[s:e],
            terminated=bool(self.terminated[e - 1]), truncated=bool(self.truncated[e - 1]),
            provenance=prov, part=part, action_nvec=self.nvec)
