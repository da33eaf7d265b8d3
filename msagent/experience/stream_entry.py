"""What the gateway puts on the stream for one accepted upload, and how its readers check it
again.

Two forms, both msgpack maps tagged by ``format``:

- ``msagent-upload/1`` (:func:`upload_entry`): an upload that came as msgpack, in the bytes
  the client sent (gunzipped), beside the gateway's provenance (game, client, time). Putting
  them on the stream as they are spares the gateway re-encoding every accepted episode, about
  a tenth of its CPU per upload.
- ``msagent-episode/1`` (:meth:`EpisodeRecord.to_msgpack`): the checked record, for uploads
  that came as JSON (and for anything else that writes records).

Readers never trust either: :func:`checked_record` decodes without unpickling, within the
game's upload limits, and checks the result against the game's schema, exactly as the gateway
did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack

from msagent.experience.records import (RECORD_FORMAT, EpisodeRecord, Provenance,
                                        RecordError)
from msagent.experience.schema import GameSchema
from msagent.experience.upload_limits import RECORD_LIMITS, TooLarge, unpack_bounded

UPLOAD_FORMAT = "msagent-upload/1"
"""Tag of an upload kept as the client sent it."""

UNPACK_ERRORS = (ValueError, TypeError, OverflowError, RecursionError,
                 msgpack.UnpackException)
"""What the decoders raise for bad bytes (truncated, malformed, too deep, bad UTF-8, ...)."""


def upload_entry(game: str, provenance: Provenance, body: bytes) -> bytes:
    """The stream form of an accepted msgpack upload: its bytes and the gateway's provenance."""
    return msgpack.packb({"format": UPLOAD_FORMAT, "game": game,
                          "client_id": provenance.client_id,
                          "received_at": provenance.received_at, "body": body},
                         use_bin_type=True)


def checked_record(data: bytes, schemas: Mapping[str, GameSchema],
                   scan_values: bool = True) -> EpisodeRecord:
    """The record a stream entry holds, checked against its game's schema (its values too,
    unless ``scan_values`` is false: see :meth:`GameSchema.check`).

    Raises:
        RecordError: Undecodable, of an unknown game, or failing the schema (the message
            says which, and names the field).
    """
    head = _head(data)
    game = head.get("game")
    schema = schemas.get(game) if isinstance(game, str) else None
    if schema is None:
        raise RecordError(f"unknown game {game!r:.80} (accepted: {sorted(schemas)})")
    try:
        if head["format"] == UPLOAD_FORMAT:
            return schema.validate_upload(_upload_body(head, schema), _provenance(head),
                                          scan_values)
        return schema.check(EpisodeRecord.from_map(head), scan_values)
    except RecordError as exc:
        raise RecordError(f"game {schema.name!r}: {exc}") from None


def _head(data: bytes) -> dict[str, Any]:
    """The entry's outer map, of either format (within the limits of either)."""
    try:
        head = unpack_bounded(data, RECORD_LIMITS)
    except UNPACK_ERRORS as exc:
        raise RecordError(f"record is not valid msgpack: {exc}") from None
    if not isinstance(head, dict) or head.get("format") not in (UPLOAD_FORMAT, RECORD_FORMAT):
        raise RecordError(f"record is not a {RECORD_FORMAT} or {UPLOAD_FORMAT} map")
    return head


def _upload_body(head: dict[str, Any], schema: GameSchema) -> Any:
    """The upload's own fields, decoded within the game's upload limits."""
    body = head.get("body")
    if not isinstance(body, bytes):
        raise RecordError("the upload's body must be msgpack bytes")
    try:
        return unpack_bounded(body, schema.limits)
    except TooLarge as exc:
        raise RecordError(f"the upload's body holds more than its game's uploads can: "
                          f"{exc}") from None
    except UNPACK_ERRORS as exc:
        raise RecordError(f"the upload's body is not valid msgpack: {exc}") from None


def _provenance(head: dict[str, Any]) -> Provenance:
    """The gateway's part of the provenance (the client's part is in the body)."""
    client, received = head.get("client_id"), head.get("received_at")
    if not isinstance(client, str) or isinstance(received, bool) or \
            not isinstance(received, int | float):
        raise RecordError("the upload lacks a client_id string or a received_at time")
    return Provenance(client, float(received))
