"""The ``[data]`` and ``[publish]`` tables of a training config: where the learner's
experience comes from (env workers, the experience store game clients fill, or both), and
where the acting policy is published as ONNX for game clients."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from msagent.config.base import Section
from msagent.experience.schema import GAME_NAME


class DataSection(Section):
    """Where fragments come from.

    Attributes:
        source: ``env`` (env workers play the env script), ``store`` (stored uploads only) or
            ``mixed`` (both feed the learner).
        store: The experience store ``msagent serve``/``msagent ingest`` write (a path relative
            to the TOML's folder, or a pyarrow/fsspec URI).
        game: The game whose records are read.
        readers: Store reader processes.
        streams: Fragments each reader ships per round (its virtual environments).
        window: Newest records each reader draws episodes from.
        refresh_s: How often readers look for newly stored records.
        min_records: Stored records to wait for before feeding the learner.
        max_uses: Times each stored record is played back at most (0: without limit). 1
            (the default) trains on every upload once and then waits for new ones, keeping
            the learner near the clients' models; raise it to replay a fixed dataset.
        order: ``newest`` draws the newest unused record first (the freshest data when
            clients upload faster than the learner trains: the least off-policy); ``uniform``
            draws uniformly from the window (replaying a dataset).
    """

    source: Literal["env", "store", "mixed"] = "env"
    store: str = ""
    game: str = ""
    readers: int = Field(1, ge=1)
    streams: int = Field(8, ge=1)
    window: int = Field(10_000, ge=1)
    refresh_s: float = Field(5.0, gt=0)
    min_records: int = Field(1, ge=1)
    max_uses: int = Field(1, ge=0)
    order: Literal["newest", "uniform"] = "newest"

    @model_validator(mode="after")
    def _store_named(self) -> DataSection:
        if self.source != "env" and not (self.store and GAME_NAME.fullmatch(self.game)):
            raise ValueError(f"data.source = {self.source!r} needs data.store (the experience "
                             "store's path or URI) and data.game (a game name)")
        return self


class PublishSection(Section):
    """Publishing the acting policy as ONNX for game clients.

    Attributes:
        models: The model store (a path relative to the TOML's folder, or an fsspec URI);
            ``""`` publishes nothing.
        game: The game name clients download the model under.
        every_snapshots: Publish every N-th snapshot the learner pushes (and once at the end).
    """

    models: str = ""
    game: str = ""
    every_snapshots: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _game_named(self) -> PublishSection:
        if self.models and not GAME_NAME.fullmatch(self.game):
            raise ValueError("publish.models needs publish.game (a game name)")
        return self
