"""TensorBoard scalars from metrics snapshots (TensorBoard is imported only when enabled)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from msagent.telemetry.formatting import losing_share


class ScalarWriter:
    """Writes a snapshot's scalars at step ``env_steps``; a no-op when disabled.

    Episode charts are written only when episodes ended since the last write, losses only
    after a new update, so repeated snapshots do not repeat points.

    Args:
        log_dir: Folder of the event files (created on the first write).
        enabled: False: write nothing and import nothing.
    """

    def __init__(self, log_dir: str | Path | None, enabled: bool = True) -> None:
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.enabled = enabled and log_dir is not None
        self._writer: Any = None
        self._episodes = self._updates = 0

    def write(self, snapshot: dict[str, Any]) -> None:
        """Add the snapshot's scalars (episode return/length, losses, throughput, counters)."""
        if not self.enabled:
            return
        writer = self._open()
        step = int(snapshot.get("env_steps", 0))
        for tag, value in self.scalars(snapshot):
            writer.add_scalar(tag, value, step)

    def scalars(self, snapshot: dict[str, Any]) -> list[tuple[str, float]]:
        """The (tag, value) pairs a snapshot adds, given what was written before."""
        out = [("throughput/env_steps_per_s", float(snapshot.get("steps_per_s", 0.0)))]
        if snapshot.get("episodes", 0) > self._episodes and snapshot.get("mean_return") is not None:
            self._episodes = snapshot["episodes"]
            out += [("charts/episode_return", float(snapshot["mean_return"])),
                    ("charts/episode_length", float(snapshot["mean_length"])),
                    ("charts/episodes", float(self._episodes))]
        if snapshot.get("updates", 0) > self._updates:
            self._updates = snapshot["updates"]
            out += [(loss_tag(k), float(v)) for k, v in snapshot.get("losses", {}).items()]
            out.append(("charts/policy_version", float(snapshot.get("policy_version") or 0)))
        out += [(f"counters/{k}", float(v)) for k, v in snapshot.get("counters", {}).items()]
        out += [(f"user/{k}", float(v)) for k, v in snapshot.get("user", {}).items()]
        if snapshot.get("league"):
            out += league_scalars(snapshot["league"])
        return out

    def add(self, tag: str, value: float, step: int) -> None:
        """Write one scalar outside snapshots (e.g. PSRO's NashConv per iteration)."""
        if self.enabled:
            self._open().add_scalar(tag, value, step)

    def flush(self) -> None:
        """Push buffered events to disk."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def __enter__(self) -> ScalarWriter:
        """Use as a context manager that closes the writer."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the writer."""
        self.close()

    def _open(self) -> Any:
        """The SummaryWriter, created (and TensorBoard imported) on first use."""
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(log_dir=str(self.log_dir))
        return self._writer


def loss_tag(name: str) -> str:
    """The TensorBoard tag of a learner statistic: names with a group (``losses/policy``,
    ``learner/lr``) keep it; bare names go under ``losses/``."""
    return name if "/" in name else f"losses/{name}"


def league_scalars(view: dict[str, Any] | None) -> list[tuple[str, float]]:
    """TensorBoard scalars under ``league/``: ratings, win rates, population, PFSP, eval."""
    if not view:
        return []
    out = [("league/population", float(view.get("population", 0)))]
    for pid, p in view.get("players", {}).items():
        out.append((f"league/elo/{pid}", float(p["elo"])))
        if p.get("win_rate") is not None:
            out.append((f"league/win_rate/{pid}", float(p["win_rate"])))
    out += [(f"league/pfsp/{k}", float(v)) for k, v in view.get("pfsp", {}).items()]
    out += [(f"league/eval/{k}", float(v["win_rate"])) for k, v in view.get("eval", {}).items()
            if v.get("win_rate") is not None]
    out += [(f"league/nash_conv/{k}", float(v["nash_conv"]))
            for k, v in view.get("nash_conv", {}).items()]
    judged = view.get("judged") or {}
    out += [(f"league/losing_moves/seat{seat}", losing_share(exam))
            for seat, exam in judged.get("seats", {}).items()]
    return out
