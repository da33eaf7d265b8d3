"""Processes for the channel security tests: a channel server, and a peer that connects and
stays silent.

``python -m tests.runtime.channel_peers`` serves an ``Echo`` over a real ``ChannelServer``,
prints its address and key (hex, one JSON line) and runs until its stdin closes.
``SILENT_PEER`` is stdlib-only, so that it also runs as another user (``nobody``) who cannot
import the repository.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from msagent.runtime.channel_server import ChannelServer
from msagent.runtime.core import InstanceCore
from msagent.runtime.spec import register

SILENT_PEER = """
import json, socket, sys, time
address, wait_s = bytes.fromhex(sys.argv[1]), float(sys.argv[2])
peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
peer.connect(address)
start = time.monotonic()
print("connected", flush=True)
peer.settimeout(wait_s)
got, eof = 0, False
try:
    while chunk := peer.recv(4096):
        got += len(chunk)
    eof = True
except ConnectionResetError:
    eof = True
except TimeoutError:
    pass
print(json.dumps({"eof": eof, "bytes": got, "after_s": time.monotonic() - start}), flush=True)
"""
"""Connects to argv[1] (hex), sends nothing, and reports whether the server closed the
connection (EOF) within argv[2] seconds, after how long, and how many bytes it had sent."""


class Echo:
    """The served object."""

    @register(direct=True)
    def echo(self, value: Any) -> Any:
        """Return ``value``."""
        return value

    @register(direct=True)
    def wait(self, seconds: float) -> float:
        """Return ``seconds`` after that long."""
        time.sleep(seconds)
        return seconds


def main() -> None:
    """Serve an Echo until stdin closes."""
    server = ChannelServer(InstanceCore(Echo(), "echo", "Echo#0"))
    print(json.dumps({"address": server.address.encode().hex(), "key": server.key.hex()}),
          flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
