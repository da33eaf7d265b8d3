"""Start, watch and restart the process that serves the game: DareFightingICE's JVM (or the
fake server of the tests), headless, on a free port bound to 127.0.0.1.

The JVM runs in a scratch directory of its own (``data`` links to the user's copy), so its
replay and score logs do not pile up in ``FIGHTINGICE_HOME``; the directory goes with it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from msagent.errors import ConfigError

HOME_VARIABLE = "FIGHTINGICE_HOME"
"""The environment variable naming the user's built copy of DareFightingICE."""

READY_LINE = "Waiting to launch a game"
"""What the game logs once it accepts games (the fake server prints it too)."""

FAILED_LINE = "Fail to start"
"""What the game logs when it could not bind its port."""

BUILD_HINT = ("build it with: cd $FIGHTINGICE_HOME && mkdir -p bin && javac -encoding UTF-8 "
              "-d bin -cp 'lib/*:lib/lwjgl/*' $(find src -name '*.java')")
"""How to build the game from its source (docs/games/fightingice.md has the whole recipe)."""

CommandFn = Callable[[int], list[str]]
"""Port -> the command line that serves the game on it."""


def game_home(home: str | os.PathLike[str] | None = None, character: str = "ZEN") -> Path:
    """The built game at ``home`` (default: ``$FIGHTINGICE_HOME``), checked.

    Raises:
        ConfigError: unset, missing, not built, or without the character's data.
    """
    raw = home if home is not None else os.environ.get(HOME_VARIABLE)
    if not raw:
        raise ConfigError(f"{HOME_VARIABLE} is not set: point it at your copy of "
                          f"DareFightingICE (see docs/games/fightingice.md), or use the fake "
                          f"server (fake=True)")
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        raise ConfigError(f"{HOME_VARIABLE}={raw} is not a directory")
    if not (path / "bin" / "Main.class").is_file() and not (path / "FightingICE.jar").is_file():
        raise ConfigError(f"{HOME_VARIABLE}={raw} holds no built game (neither bin/Main.class "
                          f"nor FightingICE.jar); {BUILD_HINT}")
    for name in ("Motion.csv", "gSetting.txt"):
        if not (path / "data" / "characters" / character / name).is_file():
            raise ConfigError(f"{HOME_VARIABLE}={raw} lacks data/characters/{character}/{name},"
                              f" which the game needs")
    return path


def java_binary() -> str:
    """The ``java`` to run the game with (``$JAVA_HOME/bin/java`` first).

    Raises:
        ConfigError: no java is installed.
    """
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise ConfigError("java is not installed (DareFightingICE needs Java 17 or newer; on "
                          "Debian/Ubuntu: apt-get install openjdk-17-jre-headless)")
    return found


def java_command(home: Path, options: list[str]) -> CommandFn:
    """The JVM command line of the game at ``home`` with extra game ``options``."""
    java = java_binary()
    classes = [home / "bin", home / "FightingICE.jar", home / "lib" / "*",
               home / "lib" / "lwjgl" / "*", home / "lib" / "lwjgl" / "natives" / "linux" /
               "amd64" / "*", home / "lib" / "grpc" / "*"]
    classpath = os.pathsep.join(str(c) for c in classes)

    def command(port: int) -> list[str]:
        return [java, "-Djava.awt.headless=true", "-cp", classpath, "Main", "--lightweight-mode",
                "--pyftg-mode", "--input-sync", "--mute", "--port", str(port), *options]

    return command


def fake_command(options: list[str]) -> CommandFn:
    """The command line of the protocol-level fake server (``fake_server.py``)."""
    def command(port: int) -> list[str]:
        return [sys.executable, "-m", "msagent.envs.games.fightingice.fake_server", "--port",
                str(port), *options]

    return command


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def check_port_free(port: int) -> None:
    """Refuse a port something already listens on.

    Raises:
        ConfigError: the port is busy.
    """
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ConfigError(f"port {port} on 127.0.0.1 is busy ({exc}); choose another, or "
                              f"leave the port unset for a free one") from exc


PR_SET_PDEATHSIG = 1
"""Linux prctl option: a signal the child gets when its parent dies."""


def _detach_but_die_with_parent() -> None:
    """In the child: a session of its own (no terminal signals), killed if its parent dies
    (a killed env worker leaves no JVM behind; Linux only, elsewhere a no-op)."""
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


class GameProcess:
    """One game server process; ``start`` (again) after it died gives a fresh one."""

    def __init__(self, command: CommandFn, data_dir: Path | None, port: int | None = None,
                 start_timeout_s: float = 60.0) -> None:
        """``data_dir`` is linked as ``data`` into the process's scratch directory."""
        self.command, self.data_dir, self.fixed_port = command, data_dir, port
        self.start_timeout_s = start_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.starts = 0
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def start(self) -> int:
        """Start the server (stopping a previous one); the port it listens on.

        Raises:
            ConfigError: the port is busy, or the server would not start (its log's tail).
        """
        self.stop()
        if self.fixed_port is not None:
            check_port_free(self.fixed_port)
        self._dir = tempfile.TemporaryDirectory(prefix="fightingice-")
        workdir = Path(self._dir.name)
        if self.data_dir is not None:
            (workdir / "data").symlink_to(self.data_dir, target_is_directory=True)
        self.port = self.fixed_port or free_port()
        log = open(workdir / "game.log", "wb")  # noqa: SIM115 (the child keeps it)
        env = dict(os.environ, SERVER_HOST="127.0.0.1")
        self.proc = subprocess.Popen(self.command(self.port), cwd=workdir, env=env,
                                     stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, preexec_fn=_detach_but_die_with_parent)
        log.close()
        self.starts += 1
        self._wait_ready(workdir / "game.log")
        return self.port

    def _wait_ready(self, log: Path) -> None:
        """Wait until the server logs that it accepts games."""
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            if READY_LINE in text:
                return
            if FAILED_LINE in text or self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                why = "could not bind" if FAILED_LINE in text else "did not start"
                hint = f" (port {self.port} busy?)" if FAILED_LINE in text else ""
                raise ConfigError(f"the game server {why}{hint}; its log ends with:\n"
                                  f"{text[-2000:]}")
            time.sleep(0.05)

    def alive(self) -> bool:
        """Whether the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """Kill the process at once (as a crash would)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        """Stop the process and remove its scratch directory."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(5)
            self.proc = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
