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

__version__ = "0.1.0"

__all__ = [
    "Resources", "ServiceHandle", "Solver", "Subscriber", "init", "launch", "publish",
    "register", "shutdown", "subscribe",
]
