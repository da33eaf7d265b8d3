"""The gfootball child process: started with the football venv's Python, asked over pipes.

``FootballChild`` starts ``server.py``, sends one request at a time and returns its reply; a
child that dies, hangs or closes its pipe becomes a ``FootballDiedError`` naming its exit code
and the tail of its stderr (kept by a reader thread, so a chatty child never blocks).
"""

from __future__ import annotations

import collections
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

from msagent.envs.games.football.wire import PipeClosed, PipeTimeout, read_frame, write_frame
from msagent.errors import ConfigError, MsagentError

REPO_ROOT = Path(__file__).resolve().parents[4]
DEFAULT_PYTHON = REPO_ROOT / ".venv-football" / "bin" / "python"
"""The football virtual environment's Python that ``scripts/setup_football.sh`` makes."""
PYTHON_ENV_VAR = "MSAGENT_FOOTBALL_PYTHON"
"""Environment variable naming another football Python."""
SERVER = Path(__file__).resolve().parent / "server.py"
SETUP_HINT = "run `bash scripts/setup_football.sh` (builds gfootball into .venv-football)"
_DROPPED_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")


class FootballDiedError(MsagentError, RuntimeError):
    """The gfootball child process died, hung or broke the protocol."""


def football_python(python: str | os.PathLike | None = None) -> Path:
    """The football Python: ``python``, else ``$MSAGENT_FOOTBALL_PYTHON``, else the default.

    Raises:
        ConfigError: that file is missing or not executable (saying how to set it up).
    """
    chosen = python or os.environ.get(PYTHON_ENV_VAR) or DEFAULT_PYTHON
    path = Path(chosen).expanduser()
    if not path.is_file() or not os.access(path, os.X_OK):
        source = "argument python" if python else (
            f"${PYTHON_ENV_VAR}" if os.environ.get(PYTHON_ENV_VAR) else "the default")
        raise ConfigError(f"Google Research Football needs its own Python, but {path} ({source})"
                          f" does not exist or is not executable; {SETUP_HINT}, or point "
                          f"${PYTHON_ENV_VAR} at a Python with gfootball installed")
    return path


class FootballChild:
    """One ``server.py`` child process and its pipes."""

    def __init__(self, python: Path, timeout_s: float = 60.0) -> None:
        self.python, self.timeout_s = python, timeout_s
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env.setdefault("SDL_VIDEODRIVER", "dummy")
        self.proc = subprocess.Popen([str(python), "-u", str(SERVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                                     env=env, close_fds=True)
        self.pid = self.proc.pid
        self._tail: collections.deque[str] = collections.deque(maxlen=40)
        self._reader = threading.Thread(target=self._drain, name=f"football-stderr-{self.pid}",
                                        daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        """Keep the last lines of the child's stderr."""
        for line in iter(self.proc.stderr.readline, b""):
            self._tail.append(line.decode("utf-8", "replace").rstrip())

    @property
    def alive(self) -> bool:
        """Whether the child process still runs."""
        return self.proc.poll() is None

    def request(self, message: dict, what: str, timeout_s: float | None = None) -> dict:
        """Send one request and return the child's reply.

        Raises:
            FootballDiedError: the child died, hung past the timeout or replied an error.
            ConfigError: the child refused the request as wrongly configured.
        """
        try:
            write_frame(self.proc.stdin.fileno(), message)
            reply = read_frame(self.proc.stdout.fileno(), timeout_s or self.timeout_s)
        except (BrokenPipeError, PipeClosed, OSError, ValueError) as exc:
            raise self._died(what, exc) from None
        except PipeTimeout:
            self.kill()
            raise self._died(what, f"no answer within {timeout_s or self.timeout_s:g} s; "
                                   f"killed") from None
        if "error" in reply:
            if reply.get("kind") == "config":
                raise ConfigError(reply["error"])
            raise FootballDiedError(f"gfootball failed during {what}: {reply['error']}"
                                    f"{self._stderr()}")
        return reply

    def _died(self, what: str, cause: Any) -> FootballDiedError:
        """The error for a child gone during ``what``."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        self._reader.join(timeout=2)
        return FootballDiedError(f"the gfootball child process (pid {self.pid}, {self.python}) "
                                 f"died during {what} with exit code {code} ({cause})"
                                 f"{self._stderr()}")

    def _stderr(self) -> str:
        """The tail of the child's stderr, for error messages."""
        lines = [line for line in self._tail if line][-15:]
        return "; its stderr ended with:\n" + "\n".join(lines) if lines else \
            "; its stderr was empty"

    def kill(self) -> None:
        """Kill the child and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
