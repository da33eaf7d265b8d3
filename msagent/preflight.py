"""Checks made before a run starts, so that a wrong address or output path fails at once and
creates no run directory: the Ray cluster answers (instead of Ray's own minutes of retries),
output files can be written."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from msagent.errors import ConfigError

ADDRESS_TIMEOUT_S = 5.0
"""How long ``msagent train --address HOST:PORT`` waits for the cluster's GCS to accept."""


def check_address(address: str, timeout_s: float = ADDRESS_TIMEOUT_S) -> None:
    """Refuse ``HOST:PORT`` (or ``ray://HOST:PORT``) when nothing accepts connections there.

    ``auto`` (Ray finds the local cluster itself) is not probed.

    Raises:
        ConfigError: Naming the address, the reason and the timeout.
    """
    if address == "auto":
        return
    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    raise ConfigError(f"no Ray cluster answers at {address} ({reason}, waited up to "
                      f"{timeout_s:.0f} s); start one with `ray start --head` or fix "
                      "--address / run.address")


def split_address(address: str) -> tuple[str, int]:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``."""
    bare = address.split("://", 1)[-1]
    host, sep, port = bare.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"run.address {address!r} is not HOST:PORT (or 'auto')")
    return host, int(port)


def check_output(path: Path | None, flag: str = "--result-json") -> None:
    """Refuse an output file whose folder is missing or not writable, before training."""
    if path is None:
        return
    folder = path.expanduser().absolute().parent
    if not folder.is_dir():
        raise ConfigError(f"{flag} {path}: folder {folder} does not exist")
    if path.is_dir():
        raise ConfigError(f"{flag} {path}: is a directory")
    if not os.access(folder, os.W_OK):
        raise ConfigError(f"{flag} {path}: folder {folder} is not writable")
