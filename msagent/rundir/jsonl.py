"""JSON-lines files of a run directory that others append to while it is read (the feed's
timeline, ``exploits.jsonl``): one object per line, a torn or foreign line skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EXPLOITS_NAME = "exploits.jsonl"
"""A run's history of ``msagent exploit`` records, one per line, oldest first."""
EXPLOITS_DIR = "exploits"
"""A run's folder of exploit run directories."""


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The file's objects in order (none when it is missing), and how many lines were not
    one (a last line being written now counts)."""
    if not path.is_file():
        return [], 0
    records, bad = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(record, dict):
                records.append(record)
    return records, bad
