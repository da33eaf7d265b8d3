"""What every command of the ``msagent`` command line shares: its exit codes, and how it
fails (one red line on stderr, no traceback)."""

from __future__ import annotations

from typing import NoReturn

import typer
from rich.console import Console
from rich.text import Text

USER_ERROR_EXIT = 2
"""The config, a script or an argument is wrong (a ``UserError``): the user can fix it."""
RUNTIME_ERROR_EXIT = 1
"""Something failed while running."""
INTERRUPTED_EXIT = 130
"""Stopped by SIGINT (Ctrl-C)."""


def fail(message: str, code: int = USER_ERROR_EXIT) -> NoReturn:
    """Print ``message`` in red on stderr (no traceback) and exit with ``code``."""
    Console(stderr=True, soft_wrap=True).print(Text(message, style="red"))
    raise typer.Exit(code)
