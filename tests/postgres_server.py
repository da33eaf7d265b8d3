"""A real PostgreSQL server per test session: its own cluster (``initdb``) in a temporary
folder, on a free loopback port, with a password; run as the ``postgres`` user when the tests
run as root (PostgreSQL refuses root). Skipped with a message where the binaries are missing
(Debian: ``apt-get install postgresql``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from msagent.gateway.redis_server import free_loopback_port

PASSWORD = "msagent-test-pw"
START_TIMEOUT_S = 60.0


def _binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (PATH first, then Debian's versioned one)."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return versions[-1].parent if versions else None


def _as_server_user(args: list[str]) -> list[str]:
    """``args`` run as ``postgres`` when this process is root (initdb refuses root)."""
    if os.geteuid() != 0:
        return args
    if shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as another user")
    return ["runuser", "-u", "postgres", "--", *args]


def _run(args: list[str]) -> None:
    """Run a server command; its output in the failure."""
    done = subprocess.run(_as_server_user(args), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{args[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """``postgresql://msagent:PASSWORD@127.0.0.1:PORT/postgres`` of a server started for the
    session and stopped after it."""
    bin_dir = _binaries()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    if os.geteuid() == 0:
        try:
            import pwd

            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run the server as")
    root = Path(tempfile.mkdtemp(prefix="msagent-pg-"))
    data, socket_dir, pwfile = root / "data", root / "socket", root / "pw"
    socket_dir.mkdir()
    pwfile.write_text(PASSWORD + "\n")
    if os.geteuid() == 0:
        for path in (root, socket_dir, pwfile):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    port = free_loopback_port()
    _run([str(bin_dir / "initdb"), "-D", str(data), "-U", "msagent", "--auth=scram-sha-256",
          f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync"])
    _run([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "server.log"), "-w",
          "-t", str(int(START_TIMEOUT_S)), "-o",
          f"-p {port} -c listen_addresses=127.0.0.1 -k {socket_dir} -c fsync=off", "start"])
    try:
        yield f"postgresql://msagent:{PASSWORD}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                        "-w", "stop"]), capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)

