"""A user's own service: a curriculum that hands each env its next level.

Declared in the TOML (``examples/cartpole_curriculum.toml``)::

    [services.custom.Curriculum]
    script = "curriculum/curriculum_service.py"
    class = "Curriculum"
    settings = {first = 1, last = 5, every = 40}

msagent launches it like its own services; the env script reaches it by name with
``Solver().retrieve("Curriculum", "next_level")``.
"""

from __future__ import annotations

import json
from pathlib import Path

from msagent import register


class Curriculum:
    """The level rises by one every ``every`` requests, from ``first`` to ``last``."""

    def __init__(self, first: int = 1, last: int = 5, every: int = 40,
                 log_path: str | None = None) -> None:
        self.first, self.last, self.every = first, last, every
        self.requests = 0
        self.log_path = Path(log_path) if log_path else None

    @register
    def next_level(self) -> int:
        """The level of the episode about to start."""
        self.requests += 1
        level = min(self.last, self.first + self.requests // self.every)
        if self.log_path is not None:  # what the tests read
            self.log_path.write_text(json.dumps({"requests": self.requests, "level": level}))
        return level

    @register
    def progress(self) -> dict[str, int]:
        """Requests so far and the current level."""
        return {"requests": self.requests,
                "level": min(self.last, self.first + self.requests // self.every)}
