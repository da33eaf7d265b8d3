"""msagent: league training for game AI, from one laptop to a cluster."""

from msagent.runtime import (
    Resources,
    ServiceHandle,
    Solver,
    Subscriber,
    init,
    launch,
    publish,
    register,
    shutdown,
    subscribe,
)
from msagent.version import __version__ as __version__

__all__ = [
    "Resources", "ServiceHandle", "Solver", "Subscriber", "init", "launch", "publish",
    "register", "shutdown", "subscribe",
]
