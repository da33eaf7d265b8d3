"""The evaluator's exploitability measure: a player's NashConv on a small sequential OpenSpiel
game, every so often, while the league trains."""

from __future__ import annotations

import logging
import time
from typing import Any

from msagent.psro.probe import NashConvProbe, probe_for_game

log = logging.getLogger("msagent.evaluator")


class NashConvWatch:
    """Measures one player's NashConv at most every ``every_s`` seconds, and only when the
    version it holds has moved; says once why it cannot (``take_notes``).

    Args:
        probe: The game's probe (None: the game has none; ``note`` says why).
        player: The player measured (for the records).
        every_s: Least time between two measures.
        note: Why there will be no measures, for the user.
    """

    def __init__(self, probe: NashConvProbe | None, player: str, every_s: float,
                 note: str | None = None) -> None:
        self.probe, self.player, self.every_s = probe, player, every_s
        self._next, self._version = 0.0, -1
        self._notes = [note] if note else []

    @classmethod
    def for_game(cls, settings: Any, game: Any) -> NashConvWatch | None:
        """The watch an evaluator's settings ask for on its game (built by ``game_factory``),
        or None when they ask for none."""
        if settings.nash_conv_every_s <= 0:
            return None
        limit = settings.nash_conv_max_histories
        probe = probe_for_game(game, limit)
        if isinstance(probe, str):
            return cls(None, settings.player, settings.nash_conv_every_s,
                       f"no live NashConv for this game: {probe} (services.evaluator."
                       f"nash_conv_max_histories is {limit:,})")
        return cls(probe, settings.player, settings.nash_conv_every_s)

    def take_notes(self) -> list[str]:
        """What the user should know (why measuring stopped or never began), each once."""
        notes, self._notes = self._notes, []
        for note in notes:
            log.warning("%s", note)
        return notes

    def measure(self, policy: Any, version: int) -> list[dict[str, Any]]:
        """``[record]`` when it is time and ``version`` is new, else ``[]``. A record:
        ``{"player", "version", "nash_conv", "time"}`` (Unix time of the measure)."""
        now = time.monotonic()
        if self.probe is None or now < self._next or version == self._version:
            return []
        self._next, self._version = now + self.every_s, version
        try:
            value = self.probe(policy)
        except ValueError as exc:  # a recurrent or continuous policy has no tables
            self._notes.append(f"no live NashConv for this policy: {exc}")
            self.probe = None
            return []
        return [{"player": self.player, "version": version, "nash_conv": value,
                 "time": time.time()}]
