"""The evaluator's judged measure: on a game whose judge script knows the value of every move
(``msagent.envs.judge``), the share of positions in which a player's own choice loses value,
every so often while the league trains."""

from __future__ import annotations

import time
from typing import Any

from msagent.envs.judge import Exam, examine, load_exams


class JudgeWatch:
    """Examines one player at most every ``every_s`` seconds, and only when the version it
    holds has moved.

    Args:
        exams: The judge's positions per seat (``load_exams``).
        player: The player examined (for the records).
        every_s: Least time between two exams.
        judge: The judge script's path (for the records).
    """

    def __init__(self, exams: dict[int, Exam], player: str, every_s: float,
                 judge: str) -> None:
        self.exams, self.player, self.every_s, self.judge = exams, player, every_s, judge
        self._next, self._version = 0.0, -1

    @classmethod
    def for_settings(cls, settings: Any) -> JudgeWatch | None:
        """The watch an evaluator's settings ask for (None: no judge)."""
        if not settings.judge:
            return None
        return cls(load_exams(settings.judge), settings.player, settings.judge_every_s,
                   settings.judge)

    def measure(self, policy: Any, version: int) -> list[dict[str, Any]]:
        """``[record]`` when it is time and ``version`` is new, else ``[]``. A record:
        ``{"player", "version", "judge", "seats": {seat: {"positions", "losing"}}, "time"}``."""
        now = time.monotonic()
        if now < self._next or version == self._version:
            return []
        self._next, self._version = now + self.every_s, version
        return [{"player": self.player, "version": version, "judge": self.judge,
                 "seats": examine(policy, self.exams), "time": time.time()}]
