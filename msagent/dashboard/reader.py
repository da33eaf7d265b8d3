"""Reading run directories for the dashboard: which runs a folder holds, and each run's files.

Read-only and tolerant: only JSON and TOML text and the league database (opened read-only)
are read (nothing is unpickled, imported or executed), and a missing, half-written or foreign
file becomes a warning instead of an error. Sources, newest first: ``feed/state.json`` and
``feed/timeline.jsonl`` (written while a run trains), else the newest checkpoint's JSON (runs
written before the feed existed); the league's whole match history from its database.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msagent.credentials import redact_text
from msagent.errors import UserError
from msagent.league_db.engine import DATABASE_NAME
from msagent.rundir.checkpoints import STATE_EXT
from msagent.rundir.directory import CONFIG_NAME, MARKER
from msagent.rundir.jsonl import EXPLOITS_NAME, read_jsonl
from msagent.rundir.feed import FEED_DIR, FEED_FORMAT, STATE_FILE, TIMELINE_FILE

MAX_CONFIG_CHARS = 200_000
NEWEST_MATCHES = 20
"""The newest results shown (from the league database)."""
MAX_EXPLOITS = 200
"""The newest exploits shown."""
MAX_TIMELINE_POINTS = 2_000
"""Longer timelines are thinned evenly (the newest point kept) so that pages stay small."""


@dataclass
class RunFiles:
    """What one run directory holds, as plain data.

    Attributes:
        path: The run directory.
        marker: The ``.msagent-run`` marker's JSON (empty when missing or unreadable).
        config: The resolved config's TOML text ("" when missing), every password in it
            shown as ``***``.
        state: The feed's newest state, or one rebuilt from the newest checkpoint (None: neither).
        timeline: The feed's timeline points, oldest first.
        exploits: ``msagent exploit``'s records of the run, oldest first.
        history: From the league database: the league's result count, its generations and
            the newest results (None: no database).
        checkpoints: Checkpoint steps found, oldest first.
        source: Where ``state`` came from: ``"feed"``, ``"checkpoint"`` or ``"none"``.
        warnings: What could not be read, in words.
    """

    path: Path
    marker: dict[str, Any] = field(default_factory=dict)
    config: str = ""
    state: dict[str, Any] | None = None
    timeline: list[dict[str, Any]] = field(default_factory=list)
    exploits: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[int] = field(default_factory=list)
    history: dict[str, Any] | None = None
    source: str = "none"
    warnings: list[str] = field(default_factory=list)


def is_run(path: Path) -> bool:
    """Whether ``path`` is a run directory (``msagent train`` left its marker there)."""
    return (path / MARKER).is_file()


def find_runs(root: Path) -> list[Path]:
    """``root`` itself when it is a run, else the runs directly inside it, newest name last."""
    root = Path(root)
    if is_run(root):
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and is_run(p))


def stamp(path: Path) -> str:
    """A cheap revision of a run's readable files: changes whenever the feed or a checkpoint
    is rewritten (modification times and sizes, no reading)."""
    parts = []
    for name in (f"{FEED_DIR}/{STATE_FILE}", f"{FEED_DIR}/{TIMELINE_FILE}", "checkpoints",
                 CONFIG_NAME, EXPLOITS_NAME):
        try:
            st = os.stat(path / name)
            parts.append(f"{st.st_mtime_ns:x}.{st.st_size:x}")
        except OSError:
            parts.append("-")
    return "-".join(parts)


def read_marker(path: Path) -> dict[str, Any]:
    """The run's marker (name, created, run id); empty when unreadable."""
    found = _json_file(Path(path) / MARKER, [])
    return found if isinstance(found, dict) else {}


def read_run(path: Path) -> RunFiles:
    """Everything the dashboard shows of one run, with a warning for each unreadable part."""
    files = RunFiles(Path(path))
    if not files.path.is_dir():
        files.warnings.append(f"{files.path} does not exist (yet)")
        return files
    files.marker = _json_file(files.path / MARKER, files.warnings) or {}
    files.config = redact_text(_text(files.path / CONFIG_NAME, files.warnings))
    files.checkpoints = _checkpoint_steps(files.path / "checkpoints")
    state = _json_file(files.path / FEED_DIR / STATE_FILE, files.warnings, missing_ok=True)
    files.timeline = read_timeline(files.path / FEED_DIR / TIMELINE_FILE, files.warnings)
    files.exploits = read_lines(files.path / EXPLOITS_NAME, files.warnings)[-MAX_EXPLOITS:]
    files.history = read_history(files.path, files.warnings)
    if isinstance(state, dict):
        files.state, files.source = state, "feed"
        _check_format(state, files.warnings)
        return files
    if state is not None:
        files.warnings.append(f"{STATE_FILE} holds no JSON object; ignored")
    files.state = _from_checkpoint(files.path / "checkpoints", files.checkpoints, files.warnings)
    files.source = "none" if files.state is None else "checkpoint"
    if files.state is None:
        files.warnings.append("no league or progress data yet: the run has written neither "
                              "its live feed nor a readable checkpoint")
    return files


def read_history(path: Path, warnings: list[str]) -> dict[str, Any] | None:
    """The league database's figures and newest results (None: the run has none)."""
    if not (path / DATABASE_NAME).exists():
        return None  # a PostgreSQL league: its console's history (the dashboard reads files)
    from sqlalchemy.exc import SQLAlchemyError

    from msagent.league_db.reader import newest_matches
    from msagent.league_history import run_database

    try:
        engine, run_id = run_database(path)
        try:  # the newest result's seq is the league's count: no count(*) of a million rows
            newest = newest_matches(engine, run_id, NEWEST_MATCHES)
        finally:
            engine.dispose()
        return {"matches": newest[0]["seq"] if newest else 0,
                "generations": newest[0]["generation"] + 1 if newest else 0,
                "newest": newest}
    except (UserError, SQLAlchemyError, ValueError) as exc:
        warnings.append(f"the league database could not be read ({exc})"[:300])
        return None


def read_timeline(path: Path, warnings: list[str]) -> list[dict[str, Any]]:
    """The timeline's points; a torn last line (a run writing it right now) is skipped."""
    return thin(read_lines(path, warnings), MAX_TIMELINE_POINTS)


def read_lines(path: Path, warnings: list[str]) -> list[dict[str, Any]]:
    """A JSON-lines file's objects; a torn last line (being written now) is skipped."""
    records, bad = read_jsonl(path)
    if bad > 1:
        warnings.append(f"{path.name}: {bad} unreadable lines skipped")
    return records


def thin(points: list[Any], most: int) -> list[Any]:
    """At most ``most`` points, evenly spaced, the first and the newest kept."""
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


def _check_format(state: dict[str, Any], warnings: list[str]) -> None:
    """A warning when another msagent wrote the feed in a layout this one does not know."""
    if state.get("format") != FEED_FORMAT:
        warnings.append(f"the feed was written in format {state.get('format')!r} by msagent "
                        f"{state.get('msagent', '?')}; this dashboard reads format {FEED_FORMAT}"
                        " and shows what it understands")


def _checkpoint_steps(folder: Path) -> list[int]:
    """Steps of the checkpoint JSON files in ``folder``, oldest first."""
    if not folder.is_dir():
        return []
    steps = []
    for p in folder.glob(f"ckpt-*{STATE_EXT}"):
        try:
            steps.append(int(p.name[len("ckpt-"):-len(STATE_EXT)]))
        except ValueError:
            continue
    return sorted(steps)


def _from_checkpoint(folder: Path, steps: list[int],
                     warnings: list[str]) -> dict[str, Any] | None:
    """A feed-like state from the newest readable checkpoint JSON (older runs)."""
    for step in reversed(steps):
        data = _json_file(folder / f"ckpt-{step:09d}{STATE_EXT}", warnings)
        if isinstance(data, dict):
            return _feed_like(data, step)
    return None


def _feed_like(data: dict[str, Any], step: int) -> dict[str, Any]:
    """The fields of a checkpoint's state that the feed also has."""
    league = data.get("league")
    kind = "psro" if "psro" in data or (isinstance(league, dict) and "psro" in league) else \
        "league" if league is not None else "single"
    out: dict[str, Any] = {"kind": kind, "checkpoint": step,
                           "progress": _progress(data.get("progress"))}
    for key in ("league", "psro", "game"):
        if key in data:
            out[key] = data[key]
    return out


def _progress(saved: Any) -> dict[str, Any]:
    """Progress figures of a checkpoint's saved metrics (whatever of them is there)."""
    if not isinstance(saved, dict):
        return {}
    return {k: saved[k] for k in ("env_steps", "episodes", "updates", "elapsed_s")
            if k in saved}


def _json_file(path: Path, warnings: list[str], missing_ok: bool = False) -> Any:
    """A JSON file's data; None (with a warning unless it is simply missing) when unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if not missing_ok:
            warnings.append(f"{path.name} is missing")
    except (OSError, ValueError) as exc:
        warnings.append(f"{path.name} is unreadable ({type(exc).__name__}: {exc})"[:300])
    return None


def _text(path: Path, warnings: list[str]) -> str:
    """A text file's first ``MAX_CONFIG_CHARS`` characters ("" with a warning if missing)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(MAX_CONFIG_CHARS)
    except OSError:
        warnings.append(f"{path.name} is missing")
        return ""
