"""A gateway process gives freed request buffers back to the system (``heap.py``): after one
large block, glibc would otherwise serve later large bodies from the heap and keep their
pages once a few small survivors pin them."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """
import random, sys
import psutil
from msagent.gateway.heap import return_freed_memory
if sys.argv[1] == "fixed":
    assert return_freed_memory()
rss = lambda: psutil.Process().memory_info().rss
big = bytearray(4 << 20); del big          # glibc's threshold rises to 4 MiB
before = rss()
bodies = [bytearray(random.Random(i).randint(200, 900) << 10) for i in range(300)]
kept = bodies[::50]                        # a few survive, as some requests' buffers do
del bodies
print((rss() - before) >> 20)
"""


def _kept_mib(mode: str) -> int:
    """MiB a fresh process still holds after 300 large bodies came and (mostly) went."""
    done = subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True,
                          text=True, timeout=60, check=True)
    return int(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_bodies_go_back_to_the_system():
    assert _kept_mib("dynamic") > 50  # what glibc does by itself: the premise holds
    assert _kept_mib("fixed") < 10
